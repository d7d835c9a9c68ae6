// Field case C03 (docs/field-cases.md), written once and run against every store: a crashed
// holder neither blocks the key forever nor expires into a duplicate. Lease deadlines are judged
// by the store's clock (Redis TIME, PostgreSQL's clock, the host clock for MemoryStore).
import {
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  idempotencyKey,
  OutcomePendingError,
  PolicyError,
  resolvePolicy,
  StoreInputError,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const args = { orderId: 'A-100' };

/**
 * Register the C03 tests. `storeOf` gives the store (shared by the cases: every case uses its own
 * run id); `tenant` keeps runs of the same store apart.
 */
export function describeC03(storeName: string, storeOf: () => IdempotencyStore, tenant: string): void {
  let runCounter = 0;
  const nextRunId = () => `run-${++runCounter}`;

  /** Worker A claims K with a 1 s lease (or `leaseMs`) and is killed: no release, no renewal, no complete. */
  async function workerAClaimsAndDies(mode: 'at-least-once' | 'at-most-once', runId: string, leaseMs = 1000) {
    const key = idempotencyKey({ tenant, runId, tool: 'book_seat', arguments: args });
    const claim = await storeOf().claim(
      { tenant, key },
      {
        tool: 'book_seat',
        fingerprint: key,
        owner: 'worker-A',
        leaseMs,
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
    const guard = new Guard({ store: storeOf(), tenant, onEvent: (event) => events.push(event) });
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

  describe(`C03 on ${storeName}: a crashed holder neither blocks the key forever nor runs twice`, () => {
    it('B retrying at 0.5 s is told the call is in progress; it does not run beside A', async () => {
      const runId = nextRunId();
      // A 5 s lease here: B must retry while it is live, and a loaded machine stretches the
      // 0.5 s sleep (seen past 1 s with 2 cores busy).
      await workerAClaimsAndDies('at-least-once', runId, 5_000);
      await sleep(500);
      const b = workerB('idempotent', runId, 200);
      const error = await b.run().catch((e: unknown) => e);
      expect(OutcomePendingError.isInstance(error)).toBe(true);
      expect(b.executions()).toBe(0);
      expect(b.events.map((e) => e.type)).toEqual(['tool.waiting', 'tool.pending']);
    });

    it('B retrying at 1.5 s takes an IDEMPOTENT call over with fencing token 2', async () => {
      const runId = nextRunId();
      const key = await workerAClaimsAndDies('at-least-once', runId);
      await sleep(1500);
      const b = workerB('idempotent', runId);
      expect(await b.run()).toBe('seat 12A');
      expect(b.executions()).toBe(1);
      expect(b.fence()).toBe(2);
      expect(b.events[0]).toMatchObject({ type: 'tool.started', attempt: 2, fence: 2, takeover: true });
      expect(await storeOf().get({ tenant, key })).toMatchObject({
        state: 'completed',
        fence: 2,
        attempt: 2,
      });
    });

    it('B waiting from 0.5 s is woken at the lease deadline and takes over (no fixed poll)', async () => {
      const runId = nextRunId();
      // Timed from A's claim, not from the end of a sleep a stalled loop stretches.
      const claimSentAt = performance.now();
      await workerAClaimsAndDies('at-least-once', runId);
      await sleep(500);
      const b = workerB('idempotent', runId);
      expect(await b.run()).toBe('seat 12A');
      const sinceClaimMs = performance.now() - claimSentAt;
      // Not before A's 1 s lease (set after the claim was sent; -5: whole-ms deadlines), and
      // well before a fixed poll would have noticed.
      expect(sinceClaimMs).toBeGreaterThanOrEqual(995);
      expect(sinceClaimMs).toBeLessThan(2000);
      expect(b.fence()).toBe(2);
    });

    it('B retrying at 1.5 s gets IndeterminateOutcomeError for an EFFECTFUL call and does not run it', async () => {
      const runId = nextRunId();
      const key = await workerAClaimsAndDies('at-most-once', runId);
      await sleep(1500);
      const b = workerB('effectful', runId);
      const error = await b.run().catch((e: unknown) => e);
      expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ reasonType: 'LeaseExpired', fence: 1, attempt: 1 });
      expect(b.executions()).toBe(0);
      expect(await storeOf().get({ tenant, key })).toMatchObject({ state: 'indeterminate' });
      // Every later retry gets the same answer; the body never runs.
      expect(IndeterminateOutcomeError.isInstance(await b.run().catch((e: unknown) => e))).toBe(true);
      expect(b.executions()).toBe(0);
    });

    it('a lease of 0, negative, fractional or past the longest timer is refused, never stored as "no expiry"', async () => {
      const bad = [0, -1, -1000, 0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31];
      for (const leaseMs of bad) {
        // By the policy, when it is configured...
        expect(() => resolvePolicy({ kind: Idempotency.EFFECTFUL, leaseMs })).toThrow(PolicyError);
        expect(() => new Guard({ store: storeOf(), defaults: { leaseMs } })).toThrow(PolicyError);
        // ...and by the store itself, before anything is written.
        const ref = {
          tenant,
          key: idempotencyKey({ tenant, runId: nextRunId(), tool: 'book_seat', arguments: args }),
        };
        const refused = await storeOf()
          .claim(ref, {
            tool: 'book_seat',
            fingerprint: ref.key,
            owner: 'x',
            leaseMs,
            retentionMs: 1000,
            mode: 'at-most-once',
            maxAttempts: 1,
            checkFingerprint: false,
          })
          .catch((error: unknown) => error);
        expect(StoreInputError.isInstance(refused), `leaseMs ${leaseMs}: ${String(refused)}`).toBe(true);
        expect(refused).toMatchObject({ field: 'leaseMs' });
        expect(await storeOf().get(ref)).toBeNull();
      }
    });

    it('an in-progress record never outlives its lease + retention window', async () => {
      const ref = { tenant, key: `k-${nextRunId()}` };
      await storeOf().claim(ref, {
        tool: 't',
        fingerprint: 'f',
        owner: 'dead',
        leaseMs: 500,
        retentionMs: 1_000,
        mode: 'at-most-once',
        maxAttempts: 1,
        checkFingerprint: false,
      });
      const record = await storeOf().get(ref);
      expect(record).toMatchObject({ state: 'in_progress' });
      expect(record!.expiresAtMs - record!.leaseExpiresAtMs).toBe(1_000);
      // Past the lease, 1 s before the window ends (room for a loaded machine's late timers).
      await sleep(500);
      expect(await storeOf().get(ref)).toMatchObject({ state: 'in_progress' });
      await sleep(1_100);
      expect(await storeOf().get(ref)).toBeNull();
    });
  });
}
