// docs/approvals.md, "langchain": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { checkpointer, config, messages, model, refundOrder } from '../support-langchain.js';

const guard = new Guard({ store: new MemoryStore() });
declare const session: { userId: string };

// #region langchain
import { Command } from '@langchain/langgraph';
import { recordApprovals, toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent, humanInTheLoopMiddleware } from 'langchain';

const agent = createAgent({
  model,
  tools: [refundOrder],
  checkpointer,
  middleware: [
    toolfenceMiddleware({
      guard,
      policies: { refund_order: { kind: Idempotency.EFFECTFUL, approval: 'required' } },
    }),
    humanInTheLoopMiddleware({ interruptOn: { refund_order: true } }),
  ],
});
await agent.invoke({ messages }, config); // pauses at the approval interrupt

// The authenticated route that receives the reviewer's decisions:
const resume = { decisions: [{ type: 'approve' as const }] };
await recordApprovals(agent, config, resume, { by: session.userId });
await agent.invoke(new Command({ resume }), config);
// #endregion langchain
