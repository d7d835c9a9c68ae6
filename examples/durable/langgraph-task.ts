// A LangGraph functional-API task whose effect is guarded: two workers that resume the same
// thread at once both run the pending task (LangGraph caches a task's result only once it is
// checkpointed); with guardStep keyed by the thread and LangGraph's task id, the card is charged
// once and both get the charge. Tested in packages/durable/test/langgraph-task.test.ts (docs/durable-steps.md).
// #region recipe
import {
  type BaseCheckpointSaver,
  entrypoint,
  getConfig,
  interrupt,
  MemorySaver,
  task,
} from '@langchain/langgraph';
import { type Guard, isCallStopError } from '@toolfence/core';
import { guardStep } from '@toolfence/durable';

export interface Payments {
  charge(orderId: string, cents: number, idempotencyKey: string): Promise<{ id: string }>;
}

/** The checkout entrypoint of one worker: its guard, the workers' shared checkpointer. */
export function checkoutWorkflow(
  guard: Guard,
  payments: Payments,
  checkpointer: BaseCheckpointSaver = new MemorySaver(),
) {
  const chargeCard = task(
    // A retry must not run a stopped charge again: LangGraph's default retryOn would.
    { name: 'chargeCard', retry: { maxAttempts: 3, retryOn: (error) => !isCallStopError(error) } },
    async (orderId: string, cents: number) => {
      const { configurable } = getConfig();
      return guardStep(
        {
          guard,
          // The thread, and LangGraph's id of this task in it (the same for every run of the task).
          step: { runId: configurable?.thread_id, stepId: configurable?.__pregel_task_id },
          name: 'chargeCard',
          arguments: { orderId, cents },
        },
        ({ idempotencyKey }) => payments.charge(orderId, cents, idempotencyKey),
      );
    },
  );

  return entrypoint(
    { name: 'checkout', checkpointer },
    async ({ orderId, cents }: { orderId: string; cents: number }) => {
      const approved = interrupt(`Charge ${cents} cents for ${orderId}?`);
      if (approved !== true) return { orderId, charged: false };
      const charge = await chargeCard(orderId, cents);
      return { orderId, charged: true, chargeId: charge.id };
    },
  );
}
// #endregion recipe
