// docs/mcp.md, "over-http-a-stateless-server-and-a-sessi-3": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolRequest } from '@modelcontextprotocol/sdk/types.js';

const client = new Client({ name: 'agent', version: '1.0.0' });
declare const params: CallToolRequest['params'];

// #region over-http-a-stateless-server-and-a-sessi-3
await client.callTool(params, undefined, { timeout: 10_000 }); // McpError RequestTimeout (-32001) after 10 s
// #endregion over-http-a-stateless-server-and-a-sessi-3
