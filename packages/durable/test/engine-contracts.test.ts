// The Temporal, Inngest and Restate recipes (examples/durable/*.ts) against each engine's
// documented step contract, since none of the three runs offline here (docs/durable-steps.md):
// - the step's identity is the same for every retry and every concurrent twin of it;
// - the engine retries every error but its non-retryable one: Temporal an `ApplicationFailure`
//   with `nonRetryable: true`, Inngest a `NonRetriableError`, Restate a `TerminalError`.
// Each engine below is that contract and nothing more: a retry loop and a twin delivery.
import { Guard, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { stopErrorOf } from '@toolfence/durable';
import { describe, expect, it } from 'vitest';
import { checkoutHandler } from '../../../examples/durable/inngest-step.js';
import { payHandler } from '../../../examples/durable/restate-run.js';
import { createActivities } from '../../../examples/durable/temporal-activity.js';

function countingPayments(options: { failAfterCharge?: boolean } = {}) {
  const charges: string[] = [];
  return {
    charges,
    payments: {
      async charge(orderId: string, cents: number) {
        charges.push(`${orderId}:${cents}`);
        await new Promise((resolve) => setTimeout(resolve, 30));
        if (options.failAfterCharge === true) throw new Error('socket hang up');
        return { id: `ch_${charges.length}` };
      },
    },
  };
}

/** An engine's retry loop: runs `attempt` until it returns, or throws a non-retryable error. */
async function withRetries<T>(
  attempt: (number: number) => Promise<T>,
  isNonRetryable: (error: unknown) => boolean,
  maxAttempts = 4,
): Promise<{ value?: T; error?: unknown; attempts: number }> {
  for (let number = 1; ; number++) {
    try {
      return { value: await attempt(number), attempts: number };
    } catch (error) {
      if (isNonRetryable(error) || number === maxAttempts) return { error, attempts: number };
    }
  }
}

/** Two workers sharing one toolfence store. */
function twoWorkers() {
  const store = new MemoryStore();
  return [new Guard({ store }), new Guard({ store })] as const;
}

// Temporal: `ApplicationFailure.create({ nonRetryable: true })` is not retried.
class ApplicationFailure extends Error {
  override name = 'ApplicationFailure';
  nonRetryable = false;
  type: string | undefined;
  static create(options: { message?: string; type?: string; nonRetryable?: boolean; cause?: Error }) {
    const failure = new ApplicationFailure(options.message, { cause: options.cause });
    failure.nonRetryable = options.nonRetryable === true;
    failure.type = options.type;
    return failure;
  }
}
const temporalFinal = (error: unknown) => error instanceof ApplicationFailure && error.nonRetryable;

describe('Temporal activity (examples/durable/temporal-activity.ts)', () => {
  const info = (attempt: number) => () => ({
    activityId: '1',
    attempt,
    workflowExecution: { workflowId: 'order-A-1', runId: 'run-1' },
  });

  it('a retry started while the first attempt still runs: one charge, both get it', async () => {
    const { charges, payments } = countingPayments();
    const [first, second] = twoWorkers();
    const results = await Promise.all([
      createActivities(first, payments, { info: info(1), ApplicationFailure }).chargeCard('A-1', 500),
      createActivities(second, payments, { info: info(2), ApplicationFailure }).chargeCard('A-1', 500),
    ]);
    expect(charges).toEqual(['A-1:500']);
    expect(results).toEqual([{ id: 'ch_1' }, { id: 'ch_1' }]);
  });

  it('a stop is a non-retryable ApplicationFailure: one attempt, one charge', async () => {
    const { charges, payments } = countingPayments({ failAfterCharge: true });
    const [guard] = twoWorkers();
    const outcome = await withRetries(
      (attempt) =>
        createActivities(guard, payments, { info: info(attempt), ApplicationFailure }).chargeCard('A-1', 500),
      temporalFinal,
    );
    expect(outcome.attempts).toBe(1);
    expect(outcome.error).toMatchObject({ nonRetryable: true, type: 'IndeterminateOutcomeError' });
    expect(IndeterminateOutcomeError.isInstance(stopErrorOf(outcome.error))).toBe(true);
    expect(charges).toHaveLength(1);
  });
});

// Inngest: a `NonRetriableError` is not retried; a step's result is memoized by its id.
class NonRetriableError extends Error {
  override name = 'NonRetriableError';
}

describe('Inngest step.run (examples/durable/inngest-step.ts)', () => {
  const context = () => {
    const memo = new Map<string, unknown>();
    return {
      event: { data: { orderId: 'A-2', cents: 700 } },
      runId: 'run-2',
      step: {
        async run<T>(id: string, fn: () => Promise<T>): Promise<T> {
          if (memo.has(id)) return memo.get(id) as T;
          const value = await fn();
          memo.set(id, value);
          return value;
        },
      },
    };
  };

  it('two executions of the run at once (a request retried on a timeout): one charge', async () => {
    const { charges, payments } = countingPayments();
    const [first, second] = twoWorkers();
    // Each execution has its own memo: neither has seen the step finish.
    const results = await Promise.all([
      checkoutHandler(first, payments, NonRetriableError)(context()),
      checkoutHandler(second, payments, NonRetriableError)(context()),
    ]);
    expect(charges).toEqual(['A-2:700']);
    expect(results).toEqual([
      { orderId: 'A-2', chargeId: 'ch_1' },
      { orderId: 'A-2', chargeId: 'ch_1' },
    ]);
  });

  it('a stop is a NonRetriableError: one attempt, one charge', async () => {
    const { charges, payments } = countingPayments({ failAfterCharge: true });
    const [guard] = twoWorkers();
    const handler = checkoutHandler(guard, payments, NonRetriableError);
    const outcome = await withRetries(
      () => handler(context()),
      (error) => error instanceof NonRetriableError,
    );
    expect(outcome.attempts).toBe(1);
    expect(outcome.error).toBeInstanceOf(NonRetriableError);
    expect(IndeterminateOutcomeError.isInstance((outcome.error as Error).cause)).toBe(true);
    expect(charges).toHaveLength(1);
  });
});

// Restate: a `TerminalError` is not retried (every other error is, without a limit by default).
class TerminalError extends Error {
  override name = 'TerminalError';
}

describe('Restate ctx.run (examples/durable/restate-run.ts)', () => {
  const context = () => ({
    request: () => ({ id: 'inv_1' }),
    run: <T>(_name: string, action: () => Promise<T>) => action(),
  });

  it('a retry of the invocation while its first attempt still runs: one charge', async () => {
    const { charges, payments } = countingPayments();
    const [first, second] = twoWorkers();
    const order = { orderId: 'A-3', cents: 900 };
    const results = await Promise.all([
      payHandler(first, payments, TerminalError)(context(), order),
      payHandler(second, payments, TerminalError)(context(), order),
    ]);
    expect(charges).toEqual(['A-3:900']);
    expect(results[0]).toEqual(results[1]);
  });

  it('a stop is a TerminalError: one attempt, one charge', async () => {
    const { charges, payments } = countingPayments({ failAfterCharge: true });
    const [guard] = twoWorkers();
    const handler = payHandler(guard, payments, TerminalError);
    const outcome = await withRetries(
      () => handler(context(), { orderId: 'A-3', cents: 900 }),
      (error) => error instanceof TerminalError,
    );
    expect(outcome.attempts).toBe(1);
    expect(outcome.error).toBeInstanceOf(TerminalError);
    expect(charges).toHaveLength(1);
  });
});
