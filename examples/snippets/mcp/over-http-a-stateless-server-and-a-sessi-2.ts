// docs/mcp.md, "over-http-a-stateless-server-and-a-sessi-2": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { fenceMcpServer } from '@toolfence/mcp';
import { guard } from '../support.js';

const makeServer = () => new McpServer({ name: 'payments', version: '1.0.0' });
declare function jsonBody(request: IncomingMessage): Promise<unknown>;
const sessions = new Map<string, StreamableHTTPServerTransport>();

// #region over-http-a-stateless-server-and-a-sessi-2
// Sessions: an initialize POST creates a server + transport under a new Mcp-Session-Id.
const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
  sessionIdGenerator: () => randomUUID(),
  onsessioninitialized: (id) => {
    sessions.set(id, transport);
  },
});
await fenceMcpServer(makeServer(), { guard }).connect(transport);
// later requests: sessions.get(req.headers['mcp-session-id'])?.handleRequest(req, res, body)
// #endregion over-http-a-stateless-server-and-a-sessi-2
