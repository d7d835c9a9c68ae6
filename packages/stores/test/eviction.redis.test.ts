// A Redis that may evict records (issue 30, item 1): every record has a TTL, so `volatile-lru`,
// the default of several managed services, deletes records under memory pressure and a retry of
// an evicted call runs its effect again. The store checks `maxmemory-policy` before its first
// write and refuses (default), warns or ignores. Each case runs on a private redis-server: the
// shared one is never reconfigured.
import { randomUUID } from 'node:crypto';
import { Guard, Idempotency, StoreConfigurationError } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { type RedisServer, startRedisServer } from '../../../test/support/redis.js';

let server: RedisServer;
let admin: Redis;
const clients: Redis[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  admin = new Redis({ host: '127.0.0.1', port: server.port });
});

afterAll(async () => {
  admin?.disconnect();
  await server?.stop();
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  await admin.config('SET', 'maxmemory-policy', 'noeviction');
  await admin.config('SET', 'maxmemory', '0');
  await admin.flushall();
  await admin.config('RESETSTAT');
});

function client(): Redis {
  // No ready check: ioredis' own INFO on connect would be counted as the store's.
  const made = new Redis({
    host: '127.0.0.1',
    port: server.port,
    name: `tf-eviction-${randomUUID()}`,
    enableReadyCheck: false,
  });
  clients.push(made);
  return made;
}

/** How many INFO commands the server ran since the last CONFIG RESETSTAT (the admin's excluded). */
async function infoCalls(): Promise<number> {
  const stats = String(await admin.info('commandstats'));
  return Number(/^cmdstat_info:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

function warningsDuring(): { readonly seen: Error[]; stop(): void } {
  const seen: Error[] = [];
  const listener = (warning: Error) => {
    if ((warning as { code?: string }).code === 'TOOLFENCE_REDIS_EVICTION_POLICY') seen.push(warning);
  };
  process.on('warning', listener);
  return { seen, stop: () => process.off('warning', listener) };
}

/** Resolves once `process.emitWarning`'s deferred 'warning' event of this tick has been emitted. */
const afterWarnings = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RedisStore checks the eviction policy before its first write', () => {
  it('refuses a volatile-lru server by default: StoreConfigurationError naming the policy, the body never runs, nothing is written', async () => {
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const store = new RedisStore({ client: client(), prefix: 'tf-evict' });
    const guard = new Guard({ store });
    let runs = 0;
    const error = await guard
      .run(
        {
          tenant: 'shop',
          tool: 'refund_order',
          arguments: { orderId: 'o-1' },
          runId: 'r',
          callId: 'c',
          policy: { kind: Idempotency.EFFECTFUL },
        },
        async () => {
          runs += 1;
          return 'refunded';
        },
      )
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(StoreConfigurationError.isInstance(error), String(error)).toBe(true);
    expect(error?.message).toContain('maxmemory-policy is volatile-lru');
    expect(error?.message).toContain(`RedisStore at 127.0.0.1:${server.port}/0`);
    expect(error?.message).toContain('noeviction');
    expect(runs).toBe(0);
    expect(await admin.dbsize()).toBe(0);
    // Reads are not refused: an operator can still look.
    expect(await store.get(randomRef())).toBeNull();
    await store.close();
  });

  it('refuses every write until the policy is fixed, then checks again and goes on (a refusal is not remembered)', async () => {
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    const store = new RedisStore({ client: client(), prefix: 'tf-evict' });
    const ref = randomRef();
    const options = claimOptions();
    for (const write of [
      () => store.claim(ref, options),
      () => store.resolve(ref, { released: true }, 60_000),
      () => store.complete(ref, { fence: 1, owner: options.owner }, '"x"', 60_000),
    ]) {
      const refused = await write().then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
      expect(StoreConfigurationError.isInstance(refused), String(refused)).toBe(true);
      expect(refused?.message).toContain('maxmemory-policy is allkeys-lru');
    }
    expect(await admin.dbsize()).toBe(0);
    await admin.config('SET', 'maxmemory-policy', 'noeviction');
    expect(await store.claim(ref, options)).toMatchObject({ status: 'acquired', fence: 1 });
    await store.close();
  });

  it('checks once: concurrent first writes share one INFO, later writes send none', async () => {
    const store = new RedisStore({ client: client(), prefix: 'tf-evict' });
    const results = await Promise.all(
      Array.from({ length: 20 }, () => store.claim(randomRef(), claimOptions())),
    );
    expect(results.map((result) => result.status)).toEqual(Array(20).fill('acquired'));
    await store.claim(randomRef(), claimOptions());
    expect(await infoCalls()).toBe(1);
    await store.close();
  });

  it("evictionPolicy 'warn' emits one warning and works; 'ignore' sends no INFO at all", async () => {
    await admin.config('SET', 'maxmemory-policy', 'volatile-ttl');
    const warnings = warningsDuring();
    try {
      const warned = new RedisStore({ client: client(), prefix: 'tf-evict', evictionPolicy: 'warn' });
      expect(await warned.claim(randomRef(), claimOptions())).toMatchObject({ status: 'acquired' });
      expect(await warned.claim(randomRef(), claimOptions())).toMatchObject({ status: 'acquired' });
      await afterWarnings();
      expect(warnings.seen).toHaveLength(1);
      expect(warnings.seen[0]?.message).toContain('maxmemory-policy is volatile-ttl');
      expect(warnings.seen[0]?.name).toBe('ToolfenceWarning');
      await warned.close();

      await admin.config('RESETSTAT');
      const ignoring = new RedisStore({ client: client(), prefix: 'tf-evict', evictionPolicy: 'ignore' });
      expect(await ignoring.claim(randomRef(), claimOptions())).toMatchObject({ status: 'acquired' });
      await afterWarnings();
      expect(await infoCalls()).toBe(0);
      expect(warnings.seen).toHaveLength(1);
      await ignoring.close();
    } finally {
      warnings.stop();
    }
  });

  it('an unknown evictionPolicy is a RangeError at construction', () => {
    expect(
      () => new RedisStore({ client: client(), evictionPolicy: 'sometimes' as unknown as 'warn' }),
    ).toThrow(/evictionPolicy must be one of 'refuse', 'warn', 'ignore'; got "sometimes"/);
  });

  it("why: under 'ignore' a volatile-lru server at maxmemory evicts a completed record and its retry runs the effect again", async () => {
    // The duplicate the default refusal prevents, reproduced: one completed EFFECTFUL call, then
    // other data with TTLs pushes the server past maxmemory.
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru');
    const store = new RedisStore({ client: client(), prefix: 'tf-evict', evictionPolicy: 'ignore' });
    const guard = new Guard({ store });
    let refunds = 0;
    const call = () =>
      guard.run(
        {
          tenant: 'shop',
          tool: 'refund_order',
          arguments: { orderId: 'o-evicted' },
          runId: 'r',
          callId: 'c',
          policy: { kind: Idempotency.EFFECTFUL },
        },
        async () => {
          refunds += 1;
          return 'refunded';
        },
      );
    await call();
    const used = Number(/^used_memory:(\d+)/m.exec(String(await admin.info('memory')))?.[1]);
    await admin.config('SET', 'maxmemory', String(used + 256 * 1024));
    const filler = admin.pipeline();
    for (let i = 0; i < 8000; i += 1) filler.set(`filler:${i}`, 'x'.repeat(1024), 'PX', 3_600_000);
    await filler.exec();
    const evicted = Number(/^evicted_keys:(\d+)/m.exec(String(await admin.info('stats')))?.[1]);
    expect(evicted).toBeGreaterThan(0);
    await call();
    expect(refunds).toBe(2);
    await store.close();
  });
});
