// packages/mcp/README.md, "client": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

const [transport] = InMemoryTransport.createLinkedPair();

// #region client
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fenceMcpClient, mcpToolPolicies, toolfenceCapabilityOf } from '@toolfence/mcp';

const client = fenceMcpClient(new Client({ name: 'agent', version: '1.0.0' }));
await client.connect(transport);
toolfenceCapabilityOf(client); // { version: 1, idempotencyKeyMeta: 'idempotencyKey' } or undefined

const listed = await client.listTools();
const policies = mcpToolPolicies(listed, { trustAnnotations: true }); // only for a server you trust

// Make tools of `listed` that call client.callTool, and wrap them with fenceTools of
// @toolfence/vercel-ai or @toolfence/langchain with these policies.
// #endregion client
export { policies };
