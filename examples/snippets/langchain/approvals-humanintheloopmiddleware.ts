// docs/langchain.md, "approvals-humanintheloopmiddleware": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent } from 'langchain';
import { checkpointer, config, messages, model, refundOrder } from '../support-langchain.js';

const guard = new Guard({ store: new MemoryStore() });

// #region approvals-humanintheloopmiddleware
import { Command } from '@langchain/langgraph';
import { humanInTheLoopMiddleware } from 'langchain';

const agent = createAgent({
  model,
  tools: [refundOrder],
  checkpointer,
  middleware: [
    toolfenceMiddleware({
      guard,
      policies: { refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
    }),
    humanInTheLoopMiddleware({ interruptOn: { refund_order: true } }),
  ],
});
await agent.invoke({ messages }, config); // pauses at the approval interrupt
await agent.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), config);
// #endregion approvals-humanintheloopmiddleware
