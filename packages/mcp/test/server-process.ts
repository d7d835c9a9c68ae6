// A guarded payments MCP server in its own process, for the cross-process tests: stdio or
// Streamable HTTP (node:http on 127.0.0.1), on MemoryStore or RedisStore. Every refund the
// provider pays is appended to a ledger file, so the test counts payments across restarts.
// Argument: a JSON ServerProcessConfig. Prints "ready <port>" on stderr when it listens.
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Guard, type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { fenceMcpServer } from '@toolfence/mcp';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';

export interface ServerProcessConfig {
  readonly transport: 'stdio' | 'http';
  /** HTTP: the port (0: any free one, printed in the ready line). */
  readonly port?: number;
  /** A Redis URL, or absent for MemoryStore. */
  readonly redisUrl?: string;
  readonly prefix?: string;
  readonly ledger: string;
  /** A refund waits this long after paying before it answers. */
  readonly holdMs?: number;
  readonly leaseMs?: number;
  readonly name?: string;
  /**
   * Redis may be down at first: commands fail at once while it is (no offline queue, so a claim
   * never runs late after the server answered "not run"), reconnecting every 100 ms.
   */
  readonly redisMayBeDown?: boolean;
}

const config = JSON.parse(process.argv[2] ?? '{}') as ServerProcessConfig;
let store: IdempotencyStore = new MemoryStore();
if (config.redisUrl !== undefined) {
  const client = new Redis(
    config.redisUrl,
    config.redisMayBeDown === true ? { enableOfflineQueue: false, retryStrategy: () => 100 } : {},
  );
  client.on('error', () => {});
  store = new RedisStore({ client, prefix: config.prefix });
}
const guard = new Guard({
  store,
  tenant: 'acme',
  defaults:
    config.leaseMs === undefined ? {} : { leaseMs: config.leaseMs, waitTimeoutMs: config.leaseMs * 4 },
});
const provider = new PaymentsProvider();
provider.onPaid = () => {
  const last = provider.refunds[provider.refunds.length - 1];
  appendFileSync(config.ledger, `${JSON.stringify({ pid: process.pid, ...last })}\n`);
};
if (config.holdMs !== undefined) {
  const holdMs = config.holdMs;
  Object.defineProperty(provider, 'hold', {
    get: () => new Promise((resolve) => setTimeout(resolve, holdMs)),
  });
}
const name = config.name ?? `payments-${process.pid}`;
const serve = () => fenceMcpServer(createPaymentsServer(provider, name), { guard });

if (config.transport === 'stdio') {
  await serve().connect(new StdioServerTransport());
  process.stderr.write('ready 0\n');
} else {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
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
      await serve().connect(created);
      transport = created;
    }
    if (transport === undefined) {
      response.writeHead(404).end();
      return;
    }
    await transport.handleRequest(request, response, body);
  });
  http.listen(config.port ?? 0, '127.0.0.1', () => {
    const address = http.address();
    process.stderr.write(`ready ${typeof address === 'object' && address !== null ? address.port : 0}\n`);
  });
}
