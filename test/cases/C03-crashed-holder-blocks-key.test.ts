// Field case C03 (shared/cases/C03-crashed-holder-blocks-key.md) on MemoryStore.
import {
  Guard,
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
  idempotencyKey,
  MemoryStore,
  OutcomePendingError,
  PolicyError,
  resolvePolicy,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const tenant = 'acme';
const args = { orderId: 'A-100' };

/** Worker A claims K with a 1 s lease and is killed: no release, no renewal, no complete. */
async function workerAClaimsAndDies(store: MemoryStore, mode: 'at-least-once' | 'at-most-once') {
  const key = idempotencyKey({ tenant, runId: 'run-1', tool: 'book_seat', arguments: args });
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

function workerB(store: MemoryStore, kind: 'idempotent' | 'effectful', waitTimeoutMs?: number) {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, tenant, onEvent: (event) => events.push(event) });
  let executions = 0;
  let fenceSeen = 0;
  const run = () =>
    guard.run(
      {
        tool: 'book_seat',
        arguments: args,
        runId: 'run-1',
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

describe('C03: a crashed holder neither blocks the key forever nor runs twice', () => {
  it('B retrying at 0.5 s is told the call is in progress; it does not run beside A', async () => {
    const store = new MemoryStore();
    await workerAClaimsAndDies(store, 'at-least-once');
    await sleep(500);
    const b = workerB(store, 'idempotent', 200);
    const error = await b.run().catch((e: unknown) => e);
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect(b.executions()).toBe(0);
    expect(b.events.map((e) => e.type)).toEqual(['tool.waiting', 'tool.pending']);
  });

  it('B retrying at 1.5 s takes an IDEMPOTENT call over with fencing token 2', async () => {
    const store = new MemoryStore();
    const key = await workerAClaimsAndDies(store, 'at-least-once');
    await sleep(1500);
    const b = workerB(store, 'idempotent');
    expect(await b.run()).toBe('seat 12A');
    expect(b.executions()).toBe(1);
    expect(b.fence()).toBe(2);
    expect(b.events[0]).toMatchObject({ type: 'tool.started', attempt: 2, fence: 2, takeover: true });
    expect(await store.get({ tenant, key })).toMatchObject({ state: 'completed', fence: 2, attempt: 2 });
  });

  it('B waiting from 0.5 s is woken at the lease deadline and takes over (no fixed poll)', async () => {
    const store = new MemoryStore();
    await workerAClaimsAndDies(store, 'at-least-once');
    await sleep(500);
    const started = Date.now();
    const b = workerB(store, 'idempotent');
    expect(await b.run()).toBe('seat 12A');
    const waitedMs = Date.now() - started;
    expect(waitedMs).toBeGreaterThanOrEqual(400);
    expect(waitedMs).toBeLessThan(1500);
    expect(b.fence()).toBe(2);
  });

  it('B retrying at 1.5 s gets IndeterminateOutcomeError for an EFFECTFUL call and does not run it', async () => {
    const store = new MemoryStore();
    const key = await workerAClaimsAndDies(store, 'at-most-once');
    await sleep(1500);
    const b = workerB(store, 'effectful');
    const error = await b.run().catch((e: unknown) => e);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reasonType: 'LeaseExpired', fence: 1, attempt: 1 });
    expect(b.executions()).toBe(0);
    expect(await store.get({ tenant, key })).toMatchObject({ state: 'indeterminate' });
    // Every later retry gets the same answer; the body never runs.
    expect(IndeterminateOutcomeError.isInstance(await b.run().catch((e: unknown) => e))).toBe(true);
    expect(b.executions()).toBe(0);
  });

  it('a lease computed as 0, negative or fractional is refused when configured, never stored as "no expiry"', () => {
    for (const leaseMs of [0, -1, -1000, 0.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => resolvePolicy({ kind: Idempotency.EFFECTFUL, leaseMs })).toThrow(PolicyError);
      expect(() => new Guard({ store: new MemoryStore(), defaults: { leaseMs } })).toThrow(PolicyError);
    }
  });

  it('an in-progress record never outlives its lease + retention window', async () => {
    let nowMs = 0;
    const store = new MemoryStore({ clock: { now: () => nowMs } });
    const ref = { tenant, key: 'k' };
    await store.claim(ref, {
      tool: 't',
      fingerprint: 'f',
      owner: 'dead',
      leaseMs: 1000,
      retentionMs: 5000,
      mode: 'at-most-once',
      maxAttempts: 1,
      checkFingerprint: false,
    });
    nowMs = 5999;
    expect(await store.get(ref)).toMatchObject({ state: 'in_progress' });
    nowMs = 6000;
    expect(await store.get(ref)).toBeNull();
  });
});
