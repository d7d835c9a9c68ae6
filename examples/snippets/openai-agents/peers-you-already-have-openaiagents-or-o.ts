// docs/openai-agents.md, "peers-you-already-have-openaiagents-or-o": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { Agent } from '@openai/agents';
import { redis } from '../support.js';

declare const triageAgent: Agent<{ ticketId: string }>;
const input = 'Refund order A-100';

// #region peers-you-already-have-openaiagents-or-o
import { Guard, Idempotency } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { fenceAgent, stopErrorOf } from '@toolfence/openai-agents';
import { run } from '@openai/agents';

const guard = new Guard({ store: new RedisStore({ client: redis }) });

const agent = fenceAgent(triageAgent, {
  // a guarded clone; triageAgent is not changed
  guard,
  policies: {
    refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
    update_address: { kind: Idempotency.IDEMPOTENT },
    // lookup_order has no policy: it runs exactly as before
  },
  runId: (runContext) => runContext.context.ticketId, // what makes two calls "the same call"
});

try {
  await run(agent, input, { context: { ticketId: 'T-4711' } });
} catch (error) {
  const stop = stopErrorOf(error); // IndeterminateOutcomeError | ExecutionAbandonedError | undefined
  if (stop === undefined) throw error;
  // The refund may have happened: check the provider, then settle the record:
  // await guard.resolve(stop.key, { outcome: { refundId } })  or  { released: true }
}
// #endregion peers-you-already-have-openaiagents-or-o
