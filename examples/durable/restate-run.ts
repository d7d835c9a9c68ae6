// A Restate `ctx.run` whose effect is guarded. Restate needs its server, which is not on npm, so
// the handler takes what it uses of `@restatedev/restate-sdk` as parameters, typed as Restate
// documents them; packages/durable/test/engine-contracts.test.ts runs it against Restate's retry
// contract (docs/durable-steps.md).
// #region recipe
import type { Guard } from '@toolfence/core';
import { guardStep, type NonRetryableErrorClass, nonRetryableError } from '@toolfence/durable';

/** What the handler uses of Restate's `Context`. */
export interface RestateContext {
  request(): { readonly id: string };
  run<T>(name: string, action: () => Promise<T>): Promise<T>;
}

export interface Payments {
  charge(orderId: string, cents: number, idempotencyKey: string): Promise<{ id: string }>;
}

/**
 * A service handler: `restate.service({ name: 'checkout', handlers: { pay: payHandler(guard,
 * payments, TerminalError) } })`.
 */
export function payHandler(guard: Guard, payments: Payments, TerminalError: NonRetryableErrorClass) {
  const nonRetryable = nonRetryableError(TerminalError);
  return async (ctx: RestateContext, order: { orderId: string; cents: number }) => {
    // The invocation id is the same for every retry of this invocation; the action is named.
    const charge = await ctx.run('charge-card', () =>
      guardStep(
        {
          guard,
          step: { runId: ctx.request().id, stepId: 'charge-card' },
          name: 'chargeCard',
          arguments: order,
          nonRetryable,
        },
        ({ idempotencyKey }) => payments.charge(order.orderId, order.cents, idempotencyKey),
      ),
    );
    return { orderId: order.orderId, chargeId: charge.id };
  };
}
// #endregion recipe
