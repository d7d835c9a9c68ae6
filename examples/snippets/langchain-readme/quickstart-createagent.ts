// packages/langchain/README.md, "quickstart-createagent": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

import { checkpointer, lookupOrder, messages, model, refundOrder } from '../support-langchain.js';
// #region quickstart-createagent
import { Guard, Idempotency, MemoryStore, StepStoppedError } from '@toolfence/core';
import { stopErrorOf, toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent } from 'langchain';

const guard = new Guard({ store: new MemoryStore() }); // RedisStore / PostgresStore across workers

const agent = createAgent({
  model,
  tools: [lookupOrder, refundOrder], // your tools, unchanged
  checkpointer,
  middleware: [
    toolfenceMiddleware({
      guard,
      policies: {
        refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
        // lookup_order has no policy: it runs exactly as before
      },
    }),
  ],
});

const config = { configurable: { thread_id: 'ticket-4711' } }; // thread_id is the run id
try {
  await agent.invoke({ messages }, config);
} catch (error) {
  const stop = stopErrorOf(error); // finds the stop inside whatever LangGraph wrapped it in
  if (stop === undefined) throw error;
  // Every call of the step whose outcome is unknown: check each with the payments provider.
  for (const call of StepStoppedError.callsOf(stop)) {
    await guard.resolve(call.key, { outcome: 'Refund verified' }); // or { released: true }
  }
  await agent.invoke(null, config); // resume: the calls get the settled outcomes
}
// #endregion quickstart-createagent
