import {
  Guard,
  Idempotency,
  IdempotencyConflictError,
  IndeterminateOutcomeError,
  MemoryStore,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { DEFAULT_STEP_POLICY, guardStep } from './guard-step.js';
import { nonRetryableError } from './non-retryable.js';
import { stopErrorOf } from './stop-error-of.js';

class FatalError extends Error {
  override name = 'FatalError';
}

const step = { runId: 'wrun_1', stepId: 'step_1' };
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Two workers of one engine: two guards (no in-process coalescing between them), one store. */
function workers() {
  const store = new MemoryStore();
  return { store, first: new Guard({ store }), second: new Guard({ store }) };
}

describe('guardStep', () => {
  it('runs the body once for a twin delivered while it runs; both get its result', async () => {
    const { first, second } = workers();
    const effects: string[] = [];
    const body = async () => {
      effects.push('charged');
      await sleep(50);
      return { chargeId: `ch_${effects.length}` };
    };
    const options = { step, name: 'chargeCard', arguments: { cents: 500 } };
    const results = await Promise.all([
      guardStep({ ...options, guard: first }, body),
      guardStep({ ...options, guard: second }, body),
    ]);
    expect(effects).toEqual(['charged']);
    expect(results).toEqual([{ chargeId: 'ch_1' }, { chargeId: 'ch_1' }]);
  });

  it('replays a finished step to a retry, without entering the body', async () => {
    const { first, second } = workers();
    let runs = 0;
    const options = { step, name: 'chargeCard' };
    expect(await guardStep({ ...options, guard: first }, async () => ++runs)).toBe(1);
    expect(await guardStep({ ...options, guard: second }, async () => ++runs)).toBe(1);
    expect(runs).toBe(1);
  });

  it('keys by the step id: another step of the run, or the same step id in another run, runs', async () => {
    const { first } = workers();
    let runs = 0;
    await guardStep({ guard: first, step, name: 'chargeCard' }, async () => ++runs);
    await guardStep(
      { guard: first, step: { ...step, stepId: 'step_2' }, name: 'chargeCard' },
      async () => ++runs,
    );
    await guardStep(
      { guard: first, step: { ...step, runId: 'wrun_2' }, name: 'chargeCard' },
      async () => ++runs,
    );
    expect(runs).toBe(3);
  });

  it('refuses the same step id with other input (a conflict, not a replay)', async () => {
    const { first } = workers();
    await guardStep({ guard: first, step, name: 'chargeCard', arguments: { cents: 500 } }, async () => 1);
    await expect(
      guardStep({ guard: first, step, name: 'chargeCard', arguments: { cents: 900 } }, async () => 2),
    ).rejects.toSatisfy((error) => IdempotencyConflictError.isInstance(error));
  });

  it("turns a stop into the engine's non-retryable error, with the stop as its cause; a retry stops again without running", async () => {
    const { first, second } = workers();
    let runs = 0;
    const options = { step, name: 'chargeCard', nonRetryable: nonRetryableError(FatalError) };
    const failed = await guardStep({ ...options, guard: first }, async () => {
      runs++;
      throw new Error('socket hang up');
    }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(FatalError);
    expect((failed as Error).cause).toSatisfy((cause) => IndeterminateOutcomeError.isInstance(cause));
    expect(stopErrorOf(failed)).toBe((failed as Error).cause);
    const retried = await guardStep({ ...options, guard: second }, async () => ++runs).catch(
      (error) => error,
    );
    expect(retried).toBeInstanceOf(FatalError);
    expect(runs).toBe(1);
  });

  it('throws the stop itself without nonRetryable', async () => {
    const { first } = workers();
    const failed = await guardStep({ guard: first, step, name: 'chargeCard' }, async () => {
      throw new Error('socket hang up');
    }).catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(failed)).toBe(true);
  });

  it('keys an IDEMPOTENT policy without a key by the step id too, and releases a failed body for the retry', async () => {
    const { first } = workers();
    const policy = { kind: Idempotency.IDEMPOTENT };
    let runs = 0;
    const options = {
      guard: first,
      step,
      name: 'sendReceipt',
      policy,
      nonRetryable: nonRetryableError(FatalError),
    };
    await expect(
      guardStep(options, async () => {
        runs++;
        throw new TypeError('mailer down');
      }),
    ).rejects.toThrow(TypeError);
    expect(await guardStep(options, async () => ++runs)).toBe(2);
    // Another step id is another key, even with the same (empty) input.
    expect(await guardStep({ ...options, step: { ...step, stepId: 'step_9' } }, async () => ++runs)).toBe(3);
  });

  it('passes the body the call context: the idempotency key to hand to a provider', async () => {
    const { first } = workers();
    const context = await guardStep({ guard: first, step, name: 'chargeCard' }, async (call) => call);
    expect(context.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
    expect(context.callId).toBe('step_1');
    expect(context.runId).toBe('wrun_1');
  });

  it('refuses a missing run id or step id before anything is claimed', async () => {
    const { first } = workers();
    for (const identity of [{ runId: '', stepId: 's' }, { runId: 'r' }, undefined]) {
      await expect(
        guardStep({ guard: first, step: identity as never, name: 'chargeCard' }, async () => 1),
      ).rejects.toThrow(TypeError);
    }
    expect(await first.list({ states: ['in_progress', 'completed'] })).toMatchObject({ records: [] });
  });

  it('keeps the default policy frozen and at-most-once', () => {
    expect(Object.isFrozen(DEFAULT_STEP_POLICY)).toBe(true);
    expect(DEFAULT_STEP_POLICY).toEqual({ kind: 'effectful', key: 'call' });
  });
});
