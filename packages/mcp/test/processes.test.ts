// @toolfence/mcp across processes: a real guarded MCP server (packages/mcp/test/server-process.ts) over
// stdio and over Streamable HTTP on 127.0.0.1, on MemoryStore and on the shared Redis (random
// prefix, deleted afterwards). Every payment the provider makes is a line in a ledger file.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import {
  fenceMcpClient,
  isReplayed,
  McpServerNotRunError,
  mcpToolPolicies,
  stoppedCallOf,
} from '@toolfence/mcp';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectRedis,
  deletePrefix,
  freePort,
  type RedisServer,
  randomPrefix,
  redisUrl,
  startRedisServer,
} from '../../../test/support/redis.js';
import { startStallingProxy } from '../../../test/support/stalling-proxy.js';
import { replayOf, withoutReplayMarker } from './replayed.js';
import type { ServerProcessConfig } from './server-process.js';

const repositoryRoot = fileURLToPath(new URL('../../..', import.meta.url));
const serverScript = fileURLToPath(new URL('./server-process.ts', import.meta.url));
const nodeArgs = ['--import', 'tsx', '--conditions=@toolfence/source', serverScript];
// This suite's HTTP ports (18400-18499 belong to it on the shared machine).
let nextPort = 18400 + Math.floor(Math.random() * 40);

let directory: string;
let redis: Redis;
const prefix = randomPrefix('mcp');
const children = new Set<ChildProcess>();

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'toolfence-mcp-'));
  redis = await connectRedis();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await deletePrefix(redis, prefix);
  redis.disconnect();
  rmSync(directory, { recursive: true, force: true });
});

function ledgerFile(label: string): string {
  return join(directory, `${label}.jsonl`);
}

function payments(ledger: string): Array<{ pid: number; orderId: string; refundId: string }> {
  let text = '';
  try {
    text = readFileSync(ledger, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

async function until(condition: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface HttpServerProcess {
  readonly child: ChildProcess;
  readonly url: URL;
  readonly exited: Promise<void>;
}

async function startHttpServer(
  config: Omit<ServerProcessConfig, 'transport' | 'port'>,
): Promise<HttpServerProcess> {
  const port = nextPort++;
  const child = spawn(
    process.execPath,
    [...nodeArgs, JSON.stringify({ ...config, transport: 'http', port })],
    {
      cwd: repositoryRoot,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  children.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (/ready \d+/.test(stderr)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before it was ready: ${stderr}`)));
  });
  return { child, url: new URL(`http://127.0.0.1:${port}/mcp`), exited };
}

async function httpClient(url: URL): Promise<Client> {
  const client = new Client({ name: 'process-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

const refund = (key: string) => ({
  name: 'refund_order',
  arguments: { orderId: 'A-100', amountCents: 3000 },
  _meta: { idempotencyKey: key },
});

describe('a guarded MCP server in another process', () => {
  it('over stdio: the same key twice runs once, the second answer identical', async () => {
    const ledger = ledgerFile('stdio');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...nodeArgs, JSON.stringify({ transport: 'stdio', ledger } satisfies ServerProcessConfig)],
      cwd: repositoryRoot,
      stderr: 'ignore',
    });
    const client = new Client({ name: 'stdio-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const first = await client.callTool(refund('stdio-key'));
      const second = await client.callTool(refund('stdio-key'));
      expect(first.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
      expect(second).toEqual(replayOf(first));
      expect(payments(ledger)).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP on Redis: two clients on two server processes racing one key, one payment', async () => {
    const ledger = ledgerFile('race');
    const common = { ledger, redisUrl, prefix, holdMs: 300 };
    const servers = await Promise.all([startHttpServer(common), startHttpServer(common)]);
    const clients = await Promise.all(servers.map((server) => httpClient(server.url)));
    try {
      const results = await Promise.all(clients.map((client) => client.callTool(refund('race-key'))));
      expect(payments(ledger)).toHaveLength(1);
      expect(results[0]?.structuredContent).toEqual({
        refundId: 're_1',
        orderId: 'A-100',
        amountCents: 3000,
      });
      expect(results.filter((result) => isReplayed(result))).toHaveLength(1);
      expect(withoutReplayMarker(results[1])).toEqual(withoutReplayMarker(results[0]));
    } finally {
      await Promise.all(clients.map((client) => client.close()));
      for (const server of servers) server.child.kill('SIGTERM');
    }
  });

  it('killed mid-call and restarted on Redis: the effectful retry is indeterminate, not a second payment', async () => {
    const ledger = ledgerFile('kill');
    const first = await startHttpServer({ ledger, redisUrl, prefix, holdMs: 60_000, leaseMs: 1_000 });
    const client = await httpClient(first.url);
    const lost = client.callTool(refund('kill-key')).catch((error: unknown) => error);
    await until(() => payments(ledger).length === 1);
    first.child.kill('SIGKILL');
    await first.exited;
    await client.close();
    await lost;

    const second = await startHttpServer({ ledger, redisUrl, prefix, leaseMs: 1_000 });
    const retrying = await httpClient(second.url);
    try {
      // The dead holder's lease (1 s) has run out or runs out while this call waits: the
      // at-most-once claim marks the record indeterminate instead of running the tool again.
      const result = (await retrying.callTool(refund('kill-key'))) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(stoppedCallOf(result)).toMatchObject({
        code: 'INDETERMINATE_OUTCOME',
        reasonType: 'LeaseExpired',
        idempotencyKey: 'kill-key',
        tool: 'refund_order',
      });
      // And again: still indeterminate, still one payment, made by the killed process.
      const again = (await retrying.callTool(refund('kill-key'))) as CallToolResult;
      expect(stoppedCallOf(again)?.code).toBe('INDETERMINATE_OUTCOME');
      expect(payments(ledger).map((payment) => payment.pid)).toEqual([first.child.pid]);
    } finally {
      await retrying.close();
      second.child.kill('SIGTERM');
    }
  });

  it('a request retried after its HTTP connection dropped runs once', async () => {
    const ledger = ledgerFile('drop');
    const server = await startHttpServer({ ledger, holdMs: 1_000 });
    const proxy = await startStallingProxy(Number(server.url.port));
    const client = await httpClient(new URL(`http://${proxy.address}/mcp`));
    try {
      const dropped = client.callTool(refund('drop-key'), undefined, { timeout: 3_000 }).then(
        () => 'answered',
        () => 'failed',
      );
      await until(() => payments(ledger).length === 1);
      // The refund is paid and its reply is on the way: the connection is reset. The SDK client
      // reports the broken stream and the request fails at its 3 s timeout, as a host sees it.
      proxy.dropConnections();
      expect(await dropped).toBe('failed');
      // The host retries the same request (same key) on a new connection.
      const retried = await client.callTool(refund('drop-key'));
      expect(retried.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
      expect(payments(ledger)).toHaveLength(1);
    } finally {
      await client.close().catch(() => {});
      await proxy.close();
      server.child.kill('SIGTERM');
    }
  });

  it('on Redis that is down, then back: the server\'s "not run" is no outcome, the client\'s retry pays once', async () => {
    const ledger = ledgerFile('not-run');
    // A private redis-server on a port where nothing listens yet: the shared Redis is untouched.
    const port = await freePort();
    const server = await startHttpServer({
      ledger,
      redisUrl: `redis://127.0.0.1:${port}`,
      prefix,
      redisMayBeDown: true,
    });
    const client = fenceMcpClient(await httpClient(server.url));
    let redisServer: RedisServer | undefined;
    try {
      const policies = mcpToolPolicies(await client.listTools(), {
        policies: { refund_order: { kind: Idempotency.EFFECTFUL } },
      });
      // The agent's own guard (its own store), as fenceTools would run the step.
      const clientGuard = new Guard({ store: new MemoryStore(), tenant: 'agent' });
      const args = { orderId: 'A-100', amountCents: 3000 };
      const step = () =>
        clientGuard.run(
          { tool: 'refund_order', arguments: args, runId: 'conversation-9', policy: policies.refund_order! },
          () => client.callTool({ name: 'refund_order', arguments: args }),
        );
      const refused = await step().catch((error: unknown) => error);
      expect(McpServerNotRunError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true });

      redisServer = await startRedisServer({ port });
      // The server's client reconnects within ~100 ms; until it has, every retry is refused the
      // same way (never recorded). Poll with a deadline.
      let answer: unknown;
      const deadline = Date.now() + 15_000;
      for (;;) {
        answer = await step().catch((error: unknown) => error);
        if (!McpServerNotRunError.isInstance(answer) || Date.now() > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect((answer as CallToolResult).structuredContent).toEqual({
        refundId: 're_1',
        orderId: 'A-100',
        amountCents: 3000,
      });
      expect(await step()).toEqual(answer);
      expect(payments(ledger)).toHaveLength(1);
    } finally {
      await client.close();
      server.child.kill('SIGTERM');
      await redisServer?.stop();
    }
  });

  it('over Streamable HTTP on Redis: three refunds in one guarded client call all pay, a retry in a new host replays each', async () => {
    const ledger = ledgerFile('call-keys');
    const server = await startHttpServer({ ledger, redisUrl, prefix });
    const step = {
      tool: 'refund_batch',
      arguments: { batch: 'B-1' },
      runId: 'run-7',
      policy: { kind: Idempotency.EFFECTFUL },
    };
    // One host: its own client guard, its own MCP client; the body refunds three orders, the
    // first twice on purpose (two refunds of the same amount are two effects).
    const host = async () => {
      const client = fenceMcpClient(await httpClient(server.url));
      try {
        return await new Guard({ store: new MemoryStore(), tenant: 'agent' }).run(step, async () => {
          const results: unknown[] = [];
          for (const orderId of ['A-1', 'A-2', 'A-1']) {
            results.push(
              await client.callTool({ name: 'refund_order', arguments: { orderId, amountCents: 500 } }),
            );
          }
          return results;
        });
      } finally {
        await client.close();
      }
    };
    try {
      const first = (await host()) as CallToolResult[];
      expect(first.map((result) => result.structuredContent)).toEqual([
        { refundId: 're_1', orderId: 'A-1', amountCents: 500 },
        { refundId: 're_2', orderId: 'A-2', amountCents: 500 },
        { refundId: 're_3', orderId: 'A-1', amountCents: 500 },
      ]);
      expect(payments(ledger)).toHaveLength(3);
      // The host died after the step: a new one runs it again, on a new connection.
      const again = await host();
      expect(again).toEqual(first.map(replayOf));
      expect(payments(ledger)).toHaveLength(3);
    } finally {
      server.child.kill('SIGTERM');
    }
  });
});
