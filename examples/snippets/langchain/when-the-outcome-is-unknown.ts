// docs/langchain.md, "when-the-outcome-is-unknown": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Guard, MemoryStore } from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent } from 'langchain';
import { config, messages, model, refundOrder } from '../support-langchain.js';

const guard = new Guard({ store: new MemoryStore() });
const agent = createAgent({
  model,
  tools: [refundOrder],
  middleware: [toolfenceMiddleware({ guard, policies: {} })],
});
const input = { messages };

// #region when-the-outcome-is-unknown
import { StepStoppedError } from '@toolfence/core';
import { stopErrorOf } from '@toolfence/langchain';

try {
  await agent.invoke(input, config);
} catch (error) {
  const stop = stopErrorOf(error);
  if (stop === undefined) throw error;
  for (const call of StepStoppedError.callsOf(stop)) {
    // check the ticket system for call.key / call.callId, then record what happened:
    await guard.resolve(call.key, { outcome: 'Ticket T-17 opened' }); // or { released: true }
  }
  await agent.invoke(null, config); // resume: the calls get the settled outcomes
}
// #endregion when-the-outcome-is-unknown
