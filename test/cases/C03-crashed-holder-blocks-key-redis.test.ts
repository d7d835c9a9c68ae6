// Field case C03 (shared/cases/C03-crashed-holder-blocks-key.md) on RedisStore, against a real
// Redis (REDIS_URL): lease deadlines are judged by the Redis clock.
import {
  Guard,
  type GuardEvent,
  IndeterminateOutcomeError,
  idempotencyKey,
  OutcomePendingError,
} from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, deletePrefix, keysUnder, randomPrefix, sleep } from '../support/redis.js';

const prefix = randomPrefix('c03');
const tenant = 'acme';
const args = { orderId: 'A-100' };
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connectRedis();
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await store?.close();
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
    client.disconnect();
  }
});

/** Worker A claims K with a 1 s lease and is killed: no release, no renewal, no complete. */
async function workerAClaimsAndDies(mode: 'at-least-once' | 'at-most-once', runId: string) {
  const key = idempotencyKey({ tenant, runId, tool: 'book_seat', arguments: args });
  const claim = await store.claim(
    { tenant, key },
    {
      tool: 'book_seat',
      fingerprint: key,
      owner: 'worker-A',
      leaseMs: 1000,
      retentionMs: 86_400_000,
      mode,
      maxAttempts: 3,
      checkFingerprint: false,
    },
  );
  expect(claim).toMatchObject({ status: 'acquired', fence: 1 });
  return key;
}

function workerB(kind: 'idempotent' | 'effectful', runId: string, waitTimeoutMs?: number) {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, tenant, onEvent: (event) => events.push(event) });
  let executions = 0;
  let fenceSeen = 0;
  const run = () =>
    guard.run(
      {
        tool: 'book_seat',
        arguments: args,
        runId,
        policy: { kind, leaseMs: 1000, ...(waitTimeoutMs === undefined ? {} : { waitTimeoutMs }) },
      },
      async (context) => {
        executions += 1;
        fenceSeen = context.fence;
        return 'seat 12A';
      },
    );
  return { run, events, executions: () => executions, fence: () => fenceSeen };
}

describe('C03 on Redis: a crashed holder neither blocks the key forever nor runs twice', () => {
  it('B retrying at 0.5 s is told the call is in progress; it does not run beside A', async () => {
    await workerAClaimsAndDies('at-least-once', 'run-pending');
    await sleep(500);
    const b = workerB('idempotent', 'run-pending', 200);
    const error = await b.run().catch((e: unknown) => e);
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect(b.executions()).toBe(0);
    expect(b.events.map((e) => e.type)).toEqual(['tool.waiting', 'tool.pending']);
  });

  it('B retrying at 1.5 s takes an IDEMPOTENT call over with fencing token 2', async () => {
    const key = await workerAClaimsAndDies('at-least-once', 'run-takeover');
    await sleep(1500);
    const b = workerB('idempotent', 'run-takeover');
    expect(await b.run()).toBe('seat 12A');
    expect(b.executions()).toBe(1);
    expect(b.fence()).toBe(2);
    expect(b.events[0]).toMatchObject({ type: 'tool.started', attempt: 2, fence: 2, takeover: true });
    expect(await store.get({ tenant, key })).toMatchObject({ state: 'completed', fence: 2, attempt: 2 });
  });

  it('B waiting from 0.5 s is woken at the lease deadline (Redis clock) and takes over', async () => {
    await workerAClaimsAndDies('at-least-once', 'run-wake');
    await sleep(500);
    const started = Date.now();
    const b = workerB('idempotent', 'run-wake');
    expect(await b.run()).toBe('seat 12A');
    const waitedMs = Date.now() - started;
    expect(waitedMs).toBeGreaterThanOrEqual(400);
    expect(waitedMs).toBeLessThan(1500);
    expect(b.fence()).toBe(2);
  });

  it('B retrying at 1.5 s gets IndeterminateOutcomeError for an EFFECTFUL call and does not run it', async () => {
    const key = await workerAClaimsAndDies('at-most-once', 'run-effectful');
    await sleep(1500);
    const b = workerB('effectful', 'run-effectful');
    const error = await b.run().catch((e: unknown) => e);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reasonType: 'LeaseExpired', fence: 1, attempt: 1 });
    expect(b.executions()).toBe(0);
    expect(await store.get({ tenant, key })).toMatchObject({ state: 'indeterminate' });
    expect(IndeterminateOutcomeError.isInstance(await b.run().catch((e: unknown) => e))).toBe(true);
    expect(b.executions()).toBe(0);
  });

  it('a lease of 0 or less is refused by the store, never stored as "no expiry"', async () => {
    const ref = {
      tenant,
      key: idempotencyKey({ tenant, runId: 'run-zero', tool: 'book_seat', arguments: args }),
    };
    for (const leaseMs of [0, -1, Number.NaN]) {
      const options = {
        tool: 'book_seat',
        fingerprint: ref.key,
        owner: 'x',
        leaseMs,
        retentionMs: 1000,
        mode: 'at-most-once' as const,
        maxAttempts: 1,
        checkFingerprint: false,
      };
      await expect(store.claim(ref, options)).rejects.toThrow(RangeError);
    }
    expect(await client.exists(store.namesOf(ref).key)).toBe(0);
  });

  it('an in-progress record never outlives its lease + retention window (Redis expiry)', async () => {
    const ref = { tenant, key: 'k-expiry' };
    const claim = await store.claim(ref, {
      tool: 't',
      fingerprint: 'f',
      owner: 'dead',
      leaseMs: 100,
      retentionMs: 200,
      mode: 'at-most-once',
      maxAttempts: 1,
      checkFingerprint: false,
    });
    expect(claim.status).toBe('acquired');
    const pttl = await client.pttl(store.namesOf(ref).key);
    expect(pttl).toBeGreaterThan(200);
    expect(pttl).toBeLessThanOrEqual(300);
    await sleep(200);
    expect(await store.get(ref)).toMatchObject({ state: 'in_progress' });
    await sleep(150);
    expect(await store.get(ref)).toBeNull();
    expect(await client.exists(store.namesOf(ref).key)).toBe(0);
  });
});
