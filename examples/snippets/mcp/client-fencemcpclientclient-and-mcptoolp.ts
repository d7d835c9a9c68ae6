// docs/mcp.md, "client-fencemcpclientclient-and-mcptoolp": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import type { ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { generateText, stepCountIs, type ToolSet } from 'ai';
import { guard } from '../support.js';
import { conversationId, model, prompt } from '../support-vercel-ai.js';

const [transport] = InMemoryTransport.createLinkedPair();
declare function aiSdkTools(client: McpClient, listed: ListToolsResult): ToolSet;

// #region client-fencemcpclientclient-and-mcptoolp
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fenceMcpClient, mcpToolPolicies } from '@toolfence/mcp';
import { fenceTools, stopOnIndeterminate } from '@toolfence/vercel-ai';

const client = fenceMcpClient(new Client({ name: 'agent', version: '1.0.0' }));
await client.connect(transport);
const listed = await client.listTools();
const tools = aiSdkTools(client, listed); // tool({ inputSchema: jsonSchema(t.inputSchema), execute: (args) => client.callTool(...) })
const result = await generateText({
  model,
  tools: fenceTools(tools, {
    guard,
    policies: mcpToolPolicies(listed, { trustAnnotations: true }), // only for a server you trust
    runId: conversationId,
  }),
  prompt,
  stopWhen: [stepCountIs(10), stopOnIndeterminate()],
});
// #endregion client-fencemcpclientclient-and-mcptoolp
export { result };
