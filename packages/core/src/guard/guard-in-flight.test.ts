import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import { Guard } from './guard.js';
import { call, effectful, idempotent, rejection, sleep } from './guard.test-support.js';

describe('Guard: identical calls in flight in one process', () => {
  function countingStore() {
    const store = new MemoryStore();
    const counts = { claim: 0, waitForSettle: 0 };
    const claim = store.claim.bind(store);
    const wait = store.waitForSettle.bind(store);
    store.claim = (ref, options) => {
      counts.claim += 1;
      return claim(ref, options);
    };
    store.waitForSettle = (ref, options) => {
      counts.waitForSettle += 1;
      return wait(ref, options);
    };
    return { store, counts };
  }

  it('1,000 identical calls cost the store one claim; each caller gets its own copy of the result', async () => {
    const { store, counts } = countingStore();
    const guard = new Guard({ store, tenant: 'acme' });
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 1000 }, () =>
        guard.run(call({ orderId: 'A-1' }), async () => {
          executions += 1;
          await sleep(20);
          return { refundId: 'r-1' };
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(counts).toEqual({ claim: 1, waitForSettle: 0 });
    expect(results[1]).toEqual({ refundId: 'r-1' });
    expect(results[1]).not.toBe(results[2]);
  });

  it('when the leader fails an IDEMPOTENT call, a follower asks the store and runs it (as without coalescing)', async () => {
    const { store } = countingStore();
    const guard = new Guard({ store, tenant: 'acme' });
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(20);
      if (executions === 1) throw new Error('flaky');
      return `ran ${executions}`;
    };
    const [first, second] = await Promise.allSettled([
      guard.run(call({ id: 1 }, idempotent), body),
      guard.run(call({ id: 1 }, idempotent), body),
    ]);
    expect(first).toMatchObject({ status: 'rejected', reason: { message: 'flaky' } });
    expect(second).toEqual({ status: 'fulfilled', value: 'ran 2' });
  });

  it('a follower is bounded by its own waitTimeoutMs and told the outcome is pending', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const slow = guard.run(call({ a: 1 }), () => sleep(300).then(() => 'done'));
    const error = await rejection(
      guard.run(call({ a: 1 }, { ...effectful, waitTimeoutMs: 50 }), () => 'never'),
    );
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect(await slow).toBe('done');
  });

  it('different arguments under a business key are not coalesced: the conflict is still reported', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const policy = {
      kind: Idempotency.EFFECTFUL,
      key: (args: Record<string, unknown>) => String(args.orderId),
    };
    const first = guard.run(call({ orderId: 'A', amount: 1 }, policy), () => sleep(50).then(() => 'one'));
    const error = await rejection(guard.run(call({ orderId: 'A', amount: 2 }, policy), () => 'two'));
    expect(IdempotencyConflictError.isInstance(error)).toBe(true);
    expect(await first).toBe('one');
  });
});
