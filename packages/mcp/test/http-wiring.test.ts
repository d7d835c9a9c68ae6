// The HTTP wirings of examples/mcp-http.ts, tested as they are: a stateless per-request
// Streamable HTTP server and a session server, each on 127.0.0.1 with one shared guard, and the
// client's `{ timeout }` after its socket went dead (a stalling TCP proxy in front).
import type { Server } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type CallToolResult, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { notRunOf } from '@toolfence/mcp';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sessionMcpHttpServer, statelessMcpHttpServer } from '../../../examples/mcp-http.js';
import { type StallingProxy, startStallingProxy } from '../../../test/support/stalling-proxy.js';
import { replayOf } from './replayed.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
});

function payments() {
  const ledger: string[] = [];
  let servers = 0;
  const factory = () => {
    servers += 1;
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
  return { ledger, factory, servers: () => servers };
}

async function listen(http: Server): Promise<number> {
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise((resolve) => {
        http.closeAllConnections();
        http.close(resolve);
      }),
  );
  const address = http.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

async function client(url: string): Promise<Client> {
  const connected = new Client({ name: 'wiring-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await connected.connect(transport);
  cleanups.push(() => connected.close());
  return connected;
}

const refund = (orderId: string, key?: string) => ({
  name: 'refund_order',
  arguments: { orderId },
  ...(key === undefined ? {} : { _meta: { idempotencyKey: key } }),
});

describe('Streamable HTTP wiring (examples/mcp-http.ts)', () => {
  it('stateless: a server per request, no sessions; the shared guard dedupes by the client key', async () => {
    const { ledger, factory, servers } = payments();
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const port = await listen(statelessMcpHttpServer(factory, { guard }));
    const one = await client(`http://127.0.0.1:${port}/mcp`);
    const two = await client(`http://127.0.0.1:${port}/mcp`);
    const first = await one.callTool(refund('A-1', 'k-1'));
    const again = await two.callTool(refund('A-1', 'k-1'));
    expect(again).toEqual(replayOf(first));
    expect(ledger).toEqual(['A-1']);
    // Every POST had its own McpServer (initialize, initialized, two calls each: 8 or more).
    expect(servers()).toBeGreaterThanOrEqual(6);
    // No session, so no run id: a call without a key is refused, not run unguarded.
    const refused = (await one.callTool(refund('A-2'))) as CallToolResult;
    expect(notRunOf(refused)).toEqual({
      code: 'KEY_DERIVATION_FAILED',
      retryable: false,
      tool: 'refund_order',
    });
    expect(ledger).toEqual(['A-1']);
  });

  it('session: one server per Mcp-Session-Id; a call without a key is keyed in its session', async () => {
    const { ledger, factory, servers } = payments();
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const port = await listen(sessionMcpHttpServer(factory, { guard }));
    const one = await client(`http://127.0.0.1:${port}/mcp`);
    await one.callTool(refund('A-1'));
    await one.callTool(refund('A-1')); // the same arguments in the same session (run): a repeat
    const two = await client(`http://127.0.0.1:${port}/mcp`);
    await two.callTool(refund('A-1')); // another session: another run, another refund
    await two.callTool(refund('A-1', 'k-9'));
    await one.callTool(refund('A-1', 'k-9')); // a client key holds across sessions
    expect(ledger).toEqual(['A-1', 'A-1', 'A-1']);
    expect(servers()).toBe(2);
  });

  it('a callTool whose socket went dead rejects at its { timeout }, not after the 60 s default', async () => {
    const { factory } = payments();
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const port = await listen(sessionMcpHttpServer(factory, { guard }));
    const proxy: StallingProxy = await startStallingProxy(port);
    cleanups.push(() => proxy.close());
    const connected = await client(`http://${proxy.address}/mcp`);
    proxy.freeze(); // the path blackholes: nothing reaches either side, no error either
    const started = Date.now();
    const error = await connected
      .callTool(refund('A-1', 'k-dead'), undefined, { timeout: 1_000 })
      .catch((caught: unknown) => caught);
    const elapsedMs = Date.now() - started;
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.RequestTimeout);
    expect(elapsedMs).toBeGreaterThanOrEqual(1_000);
    expect(elapsedMs).toBeLessThan(5_000);
    // Without the option the SDK waits this long.
    expect(DEFAULT_REQUEST_TIMEOUT_MSEC).toBe(60_000);
    proxy.thaw();
  });
});
