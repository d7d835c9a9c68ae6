// Row 8's workflow: a LangGraph functional-API checkout whose refund is a durable task(). It
// waits for a supervisor (interrupt), then refunds. With a guard the task's body goes through
// guardStep, keyed by the thread and LangGraph's task id (docs/durable-steps.md).
import { type BaseCheckpointSaver, entrypoint, getConfig, interrupt, task } from '@langchain/langgraph';
import type { Guard } from '@toolfence/core';
import { guardStep } from '@toolfence/durable';
import { policies } from './policies.js';
import type { Provider } from './provider.js';

export function durableRefund(
  provider: Provider,
  guard: Guard | undefined,
  checkpointer: BaseCheckpointSaver,
) {
  const refund = task('refund_payment', async (orderId: string, amountCents: number) => {
    if (guard === undefined) return provider.refund(orderId, amountCents);
    const { configurable } = getConfig();
    return guardStep(
      {
        guard,
        step: { runId: configurable?.thread_id, stepId: configurable?.__pregel_task_id },
        name: 'refund_payment',
        arguments: { orderId, amountCents },
        policy: policies.refund_payment, // no key of its own: keyed by the task id
      },
      () => provider.refund(orderId, amountCents),
    );
  });
  return entrypoint(
    { name: 'refund_workflow', checkpointer },
    async ({ orderId, amountCents }: { orderId: string; amountCents: number }) => {
      interrupt(`Refund ${amountCents} cents for ${orderId}?`);
      return refund(orderId, amountCents);
    },
  );
}
