// Probe (breaker): how long after a settlement a waiter wakes, per scenario, on a store pair
// (each with its own client and subscriber). Wakes that come from a poll (250 ms+) or the lease
// deadline show up as a max far above the PUBLISH round trip.
// npx tsx --conditions=@toolfence/source bench/probes/wake-latency.ts [redis|postgres]
import { randomBytes, randomUUID } from 'node:crypto';
import type { ClaimOptions, IdempotencyStore, RecordRef } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import pg from 'pg';

const kind = process.argv[2] ?? 'redis';
const rounds = Number(process.argv[3] ?? 40);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const prefix = `tf-breaker-${randomBytes(4).toString('hex')}`;

function options(over: Partial<ClaimOptions> = {}): ClaimOptions {
  return {
    tool: 't',
    fingerprint: 'f',
    owner: randomUUID(),
    leaseMs: 30_000,
    retentionMs: 60_000,
    mode: 'at-least-once',
    maxAttempts: 5,
    checkFingerprint: false,
    ...over,
  };
}

async function makeStores(): Promise<{ a: IdempotencyStore; b: IdempotencyStore; close(): Promise<void> }> {
  if (kind === 'redis') {
    const ca = new Redis('redis://127.0.0.1:6379');
    const cb = new Redis('redis://127.0.0.1:6379');
    const a = new RedisStore({ client: ca, prefix });
    const b = new RedisStore({ client: cb, prefix });
    return {
      a,
      b,
      async close() {
        await a.close();
        await b.close();
        const keys = await ca.keys(`${prefix}*`);
        if (keys.length > 0) await ca.del(...keys);
        ca.disconnect();
        cb.disconnect();
      },
    };
  }
  const schema = `breaker_${randomBytes(4).toString('hex')}`;
  const pa = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', max: 3 });
  const pb = new pg.Pool({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', max: 3 });
  const a = new PostgresStore({ pool: pa, schema });
  const b = new PostgresStore({ pool: pb, schema });
  await (a as PostgresStore).ensureSchema();
  return {
    a,
    b,
    async close() {
      await a.close();
      await b.close();
      await pa.query(`DROP SCHEMA ${schema} CASCADE`);
      await pa.end();
      await pb.end();
    },
  };
}

type Scenario = (a: IdempotencyStore, b: IdempotencyStore, ref: RecordRef) => Promise<number>;

/** Waiter on b; `between` runs on the holder's side after the waiter started; then complete. */
function scenario(
  between: (
    a: IdempotencyStore,
    ref: RecordRef,
    holder: { fence: number; owner: string },
    o: ClaimOptions,
  ) => Promise<void>,
  delayMs: number,
): Scenario {
  return async (a, b, ref) => {
    const o = options();
    const claim = await a.claim(ref, o);
    if (claim.status !== 'acquired') throw new Error(claim.status);
    const holder = { fence: claim.fence, owner: o.owner };
    let woke = 0;
    const wait = b.waitForSettle(ref, { timeoutMs: 20_000 }).then((r) => {
      woke = performance.now();
      return r;
    });
    if (delayMs > 0) await sleep(delayMs);
    await between(a, ref, holder, o);
    const done = await a.complete(ref, holder, '"x"', 60_000);
    const settled = performance.now();
    if (done.status !== 'completed') throw new Error(done.status);
    const result = await wait;
    if (result !== 'settled') throw new Error(result);
    return woke - settled;
  };
}

const scenarios: Record<string, Scenario> = {
  plain: scenario(async () => {}, 30),
  concurrent: scenario(async () => {}, 0),
  'concurrent+1ms': scenario(async () => {
    await sleep(1);
  }, 0),
  renewed: scenario(async (a, ref, h) => {
    for (let i = 0; i < 3; i++) await a.renew(ref, h, 30_000);
  }, 30),
  resent: scenario(async (a, ref, _h, o) => {
    await a.claim(ref, o);
  }, 30),
  // A second waiter on the same channel in the same store, the first one timing out just before.
  rewait: async (a, b, ref) => {
    const o = options();
    const claim = await a.claim(ref, o);
    if (claim.status !== 'acquired') throw new Error(claim.status);
    await b.waitForSettle(ref, { timeoutMs: 5 });
    let woke = 0;
    const wait = b.waitForSettle(ref, { timeoutMs: 20_000 }).then((r) => {
      woke = performance.now();
      return r;
    });
    await a.complete(ref, { fence: claim.fence, owner: o.owner }, '"x"', 60_000);
    const settled = performance.now();
    await wait;
    return woke - settled;
  },
  // Taken over after a short lease: the waiter of the new holder, marked after the takeover.
  takeover: async (a, b, ref) => {
    const first = options({ leaseMs: 20 });
    await a.claim(ref, first);
    // an early waiter marks the first life
    await b.waitForSettle(ref, { timeoutMs: 5 });
    await sleep(30);
    const o = options();
    const claim = await a.claim(ref, o);
    if (claim.status !== 'acquired' || claim.fence !== 2) throw new Error(`takeover ${claim.status}`);
    let woke = 0;
    const wait = b.waitForSettle(ref, { timeoutMs: 20_000 }).then((r) => {
      woke = performance.now();
      return r;
    });
    await sleep(30);
    await a.complete(ref, { fence: 2, owner: o.owner }, '"x"', 60_000);
    const settled = performance.now();
    await wait;
    return woke - settled;
  },
};

const stores = await makeStores();
try {
  for (const [name, run] of Object.entries(scenarios)) {
    const lat: number[] = [];
    for (let i = 0; i < rounds; i++) {
      lat.push(await run(stores.a, stores.b, { tenant: 'w', key: randomBytes(16).toString('hex') }));
    }
    lat.sort((x, y) => x - y);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(2);
    console.log(`${kind} ${name.padEnd(16)} n=${rounds} p50=${q(0.5)} ms p90=${q(0.9)} max=${q(1)} ms`);
  }
} finally {
  await stores.close();
}
