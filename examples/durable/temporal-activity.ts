// A Temporal activity whose effect is guarded. The engine is not installed in this repository
// (its test server is a binary download), so the activity takes what it uses of
// `@temporalio/activity` as parameters, typed as Temporal documents them; packages/durable/test/
// engine-contracts.test.ts runs it against Temporal's retry contract (docs/durable-steps.md).
// #region recipe
import type { Guard } from '@toolfence/core';
import { type ApplicationFailureClass, guardStep, temporalNonRetryable } from '@toolfence/durable';

/** What the activity reads of `Context.current().info` (`@temporalio/activity`). */
export interface ActivityInfo {
  readonly activityId: string;
  readonly attempt: number;
  readonly workflowExecution: { readonly workflowId: string; readonly runId: string };
}

export interface Payments {
  charge(orderId: string, cents: number, idempotencyKey: string): Promise<{ id: string }>;
}

/**
 * The activities of a worker: `Worker.create({ activities: createActivities(guard, payments,
 * { info: () => Context.current().info, ApplicationFailure }) })`.
 */
export function createActivities(
  guard: Guard,
  payments: Payments,
  temporal: { info: () => ActivityInfo; ApplicationFailure: ApplicationFailureClass },
) {
  const nonRetryable = temporalNonRetryable(temporal.ApplicationFailure);
  return {
    async chargeCard(orderId: string, cents: number): Promise<{ id: string }> {
      const { activityId, workflowExecution } = temporal.info();
      return guardStep(
        {
          guard,
          // The workflow id outlives a continue-as-new and a reset; the run id does not.
          step: { runId: workflowExecution.workflowId, stepId: activityId },
          name: 'chargeCard',
          arguments: { orderId, cents },
          nonRetryable,
        },
        ({ idempotencyKey }) => payments.charge(orderId, cents, idempotencyKey),
      );
    },
  };
}
// #endregion recipe
