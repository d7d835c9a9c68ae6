// packages/langchain/README.md, "langgraph-wrap-the-tools": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { lookupOrder, refundOrder } from '../support-langchain.js';

const guard = new Guard({ store: new MemoryStore() });

// #region langgraph-wrap-the-tools
import { fenceTools } from '@toolfence/langchain';
import { ToolNode } from '@langchain/langgraph/prebuilt';

const tools = fenceTools([lookupOrder, refundOrder], {
  guard,
  policies: { refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
});
const toolNode = new ToolNode(tools, { handleToolErrors: false }); // bind the same list to the model

// #endregion langgraph-wrap-the-tools
export { toolNode };
