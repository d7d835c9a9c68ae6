// docs/mcp.md, "over-http-a-stateless-server-and-a-sessi": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { createServer, type IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { fenceMcpServer } from '@toolfence/mcp';
import { guard } from '../support.js';

const makeServer = () => new McpServer({ name: 'payments', version: '1.0.0' });
declare function jsonBody(request: IncomingMessage): Promise<unknown>;
const sessions = new Map<string, StreamableHTTPServerTransport>();

// #region over-http-a-stateless-server-and-a-sessi
// Stateless: a fresh server and transport per POST; GET/DELETE -> 405.
createServer(async (req, res) => {
  const server = fenceMcpServer(makeServer(), { guard }); // the guard is shared
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, await jsonBody(req));
});
// #endregion over-http-a-stateless-server-and-a-sessi

export { sessions };
