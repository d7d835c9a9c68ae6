// An Inngest `step.run` whose effect is guarded. Inngest is not installed in this repository, so
// the handler takes what it uses of the SDK as parameters, typed as Inngest documents them;
// packages/durable/test/engine-contracts.test.ts runs it against Inngest's retry contract
// (docs/durable-steps.md).
// #region recipe
import type { Guard } from '@toolfence/core';
import { guardStep, type NonRetryableErrorClass, nonRetryableError } from '@toolfence/durable';

/** What the handler uses of its context: `({ event, step, runId }) => ...`. */
export interface InngestContext {
  readonly event: { readonly data: { readonly orderId: string; readonly cents: number } };
  readonly runId: string;
  readonly step: { run<T>(id: string, fn: () => Promise<T>): Promise<T> };
}

export interface Payments {
  charge(orderId: string, cents: number, idempotencyKey: string): Promise<{ id: string }>;
}

/**
 * The function's handler: `inngest.createFunction({ id: 'checkout' }, { event: 'shop/checkout' },
 * checkoutHandler(guard, payments, NonRetriableError))`.
 */
export function checkoutHandler(guard: Guard, payments: Payments, NonRetriableError: NonRetryableErrorClass) {
  const nonRetryable = nonRetryableError(NonRetriableError);
  return async ({ event, step, runId }: InngestContext) => {
    const { orderId, cents } = event.data;
    // The step's id is its first argument; with the run id it names this step for every retry.
    const charge = await step.run('charge-card', () =>
      guardStep(
        {
          guard,
          step: { runId, stepId: 'charge-card' },
          name: 'chargeCard',
          arguments: { orderId, cents },
          nonRetryable,
        },
        ({ idempotencyKey }) => payments.charge(orderId, cents, idempotencyKey),
      ),
    );
    return { orderId, chargeId: charge.id };
  };
}
// #endregion recipe
