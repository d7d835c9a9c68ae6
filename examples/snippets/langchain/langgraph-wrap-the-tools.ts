// docs/langchain.md, "langgraph-wrap-the-tools": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { createTicket, searchDocs } from '../support-langchain.js';

const guard = new Guard({ store: new MemoryStore() });

// #region langgraph-wrap-the-tools
import { fenceTools } from '@toolfence/langchain';
import { ToolNode } from '@langchain/langgraph/prebuilt';

const tools = fenceTools([createTicket, searchDocs], {
  guard,
  policies: { create_ticket: { kind: Idempotency.EFFECTFUL } },
});
const toolNode = new ToolNode(tools); // bind the same list to the model
// #endregion langgraph-wrap-the-tools

export { toolNode };
