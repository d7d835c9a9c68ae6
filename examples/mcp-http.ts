// A guarded MCP server over Streamable HTTP (node:http), wired two ways:
//
// - stateless: a new McpServer and transport for every POST (no sessions, any replica can answer
//   any request: what a load-balanced deployment wants, and what the 2026-07-28 specification,
//   which drops sessions, assumes). Calls need a client key (there is no session to scope
//   arguments-keys to), or a `runId` option.
// - session: one McpServer and transport per `Mcp-Session-Id` (SDK 1.32's stateful mode).
//
// In both, every server shares ONE guard (one store: RedisStore / PostgresStore across
// processes), and `fenceMcpServer` runs before `connect()`. Tested by packages/mcp/test/http-wiring.test.ts.
//
//   npx tsx --conditions=@toolfence/source examples/mcp-http.ts
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { type FenceMcpServerOptions, fenceMcpServer } from '@toolfence/mcp';
import { z } from 'zod';

/** Makes the (unfenced) McpServer with your tools; called once per request or per session. */
export type ServerFactory = () => McpServer;

async function jsonBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Stateless: every POST gets a fresh fenced McpServer and a transport without sessions
 * (`sessionIdGenerator: undefined`), closed when the response is. GET and DELETE (the SSE stream
 * and session end of stateful mode) are answered 405.
 */
export function statelessMcpHttpServer(factory: ServerFactory, fence: FenceMcpServerOptions): Server {
  return createServer(async (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = fenceMcpServer(factory(), fence); // the guard (and its store) is shared
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request, response, await jsonBody(request));
  });
}

/**
 * Sessions: an `initialize` POST creates a fenced McpServer and a transport with a session id;
 * later requests carrying `Mcp-Session-Id` go to it; DELETE (or a close) ends it. The session id
 * is the default run id of calls without a client key.
 */
export function sessionMcpHttpServer(factory: ServerFactory, fence: FenceMcpServerOptions): Server {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  return createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const body = request.method === 'POST' ? await jsonBody(request) : undefined;
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (transport === undefined && request.method === 'POST' && isInitializeRequest(body)) {
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId !== undefined) sessions.delete(created.sessionId);
      };
      await fenceMcpServer(factory(), fence).connect(created);
      transport = created;
    }
    if (transport === undefined) {
      // An unknown or expired session: 404 tells the client to initialize again.
      response.writeHead(typeof sessionId === 'string' ? 404 : 400).end();
      return;
    }
    await transport.handleRequest(request, response, body);
  });
}

// --- run it: both wirings on MemoryStore, a client with a timeout ----------------------------

function refundServer(ledger: string[]): ServerFactory {
  return () => {
    const server = new McpServer({ name: 'payments', version: '1.0.0' });
    server.registerTool(
      'refund_order',
      { inputSchema: { orderId: z.string() }, annotations: { destructiveHint: true } },
      async ({ orderId }) => {
        ledger.push(orderId);
        return { content: [{ type: 'text', text: `refunded ${orderId} (#${ledger.length})` }] };
      },
    );
    return server;
  };
}

async function listen(server: Server): Promise<URL> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return new URL(
    `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/mcp`,
  );
}

async function main(): Promise<void> {
  const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
  for (const [label, make] of [
    ['stateless', statelessMcpHttpServer],
    ['session', sessionMcpHttpServer],
  ] as const) {
    const ledger: string[] = [];
    const http = make(refundServer(ledger), { guard });
    const url = await listen(http);
    const client = new Client({ name: 'example', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url));
    const call = {
      name: 'refund_order',
      arguments: { orderId: 'A-1' },
      _meta: { idempotencyKey: `${label}-1` },
    };
    // A timeout per call: the SDK's default is 60 s, which a dead socket makes you wait in full.
    await client.callTool(call, undefined, { timeout: 10_000 });
    await client.callTool(call, undefined, { timeout: 10_000 });
    console.log(`${label}: 2 calls, ${ledger.length} refund`);
    await client.close();
    await new Promise((resolve) => http.close(resolve));
  }
}

if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  await main();
}
