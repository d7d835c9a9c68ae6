// Conformance cases: waitForSettle (at once when settled, woken by every settle and by lease
// expiry, a timeout while the lease lives, many waiters).
import { equal, ok, same } from '../check.js';
import { statusesOf } from './case-checks.js';
import { type CaseDefinition, DAY_MS, defineCase, LONG_LEASE_MS, sleep } from './case-context.js';

export const waitingCases: readonly CaseDefinition[] = [
  defineCase('waitForSettle resolves at once for a settled or missing record', async (c) => {
    const ref = c.ref();
    equal(await c.store.waitForSettle(ref, { timeoutMs: 5_000 }), 'settled', 'missing');
    const { holder } = await c.acquire(ref);
    await c.store.complete(ref, holder, '1', DAY_MS);
    equal(await c.store.waitForSettle(ref, { timeoutMs: 5_000 }), 'settled', 'completed');
  }),

  ...(['complete', 'release', 'markIndeterminate'] as const).map((event) =>
    defineCase(`waitForSettle wakes on ${event}`, async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
      const started = Date.now();
      const waiting = c.racer(1).waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs });
      await sleep(Math.min(100, c.leaseMs));
      if (event === 'complete') await c.store.complete(ref, holder, '"done"', DAY_MS);
      else if (event === 'release') await c.store.release(ref, holder);
      else await c.store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS);
      equal(await waiting, 'settled', 'wait');
      ok(Date.now() - started < c.wakeTimeoutMs * 0.9, 'woken well before its timeout');
    }),
  ),

  defineCase('waitForSettle wakes when the lease expires', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: c.leaseMs * 2 });
    equal(await c.store.waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs }), 'lease_expired', 'wait');
    equal((await c.store.claim(ref, c.options())).status, 'acquired', 'claim after the wake-up');
  }),

  defineCase('waitForSettle times out while the holder keeps a live lease', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
    equal(await c.store.waitForSettle(ref, { timeoutMs: c.leaseMs * 2 }), 'timeout', 'wait');
  }),

  defineCase('many waiters on one key all wake on one settle', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
    const waiters = Array.from({ length: 100 }, (_, index) =>
      c.racer(index).waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs }),
    );
    await sleep(Math.min(100, c.leaseMs));
    await c.store.complete(ref, holder, '"done"', DAY_MS);
    same(statusesOf((await Promise.all(waiters)).map((status) => ({ status }))), { settled: 100 }, 'waiters');
  }),
];
