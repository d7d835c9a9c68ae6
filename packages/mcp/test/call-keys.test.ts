// @toolfence/mcp: one key per callTool inside one guarded client call. A real McpServer and
// Client of @modelcontextprotocol/sdk over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { currentToolCall, Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, mcpCallKey } from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';
import { replayOf } from './replayed.js';

async function connect(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(clientTransport);
  return client;
}

function emailServer() {
  const server = createPaymentsServer(new PaymentsProvider());
  const sent: Array<{ to: string; key: unknown }> = [];
  server.registerTool('send_email', { inputSchema: { to: z.string() } }, async ({ to }, extra) => {
    sent.push({ to, key: extra._meta?.idempotencyKey });
    return { content: [{ type: 'text', text: `sent #${sent.length} to ${to}` }] };
  });
  fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }) });
  return { server, sent };
}

const guardedStep = {
  tool: 'notify_all',
  arguments: { batch: 7 },
  runId: 'run-1',
  policy: { kind: Idempotency.EFFECTFUL },
};

describe('one key per callTool', () => {
  it('three send_email calls in one guarded call all run; a retry of the guarded call replays each', async () => {
    const { server, sent } = emailServer();
    const client = fenceMcpClient(await connect(server));
    const body = async () => {
      const results: unknown[] = [];
      // Two identical calls (two emails to ada) and one other: three effects.
      for (const to of ['ada', 'bob', 'ada']) {
        results.push(await client.callTool({ name: 'send_email', arguments: { to } }));
      }
      return { results, key: currentToolCall()?.idempotencyKey as string };
    };
    const first = await new Guard({ store: new MemoryStore() }).run(guardedStep, body);
    expect(sent.map((email) => email.to)).toEqual(['ada', 'bob', 'ada']);
    expect(first.results.map((result) => (result as CallToolResult).isError)).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(sent.map((email) => email.key)).toEqual([
      mcpCallKey(first.key, 'send_email', { to: 'ada' }, 0),
      mcpCallKey(first.key, 'send_email', { to: 'bob' }, 0),
      mcpCallKey(first.key, 'send_email', { to: 'ada' }, 1),
    ]);
    expect(new Set(sent.map((email) => email.key)).size).toBe(3);

    // The host lost the step and retries it elsewhere (a new client store): same guarded key,
    // same calls, same keys: the server replays all three.
    const retried = await new Guard({ store: new MemoryStore() }).run(guardedStep, body);
    expect(retried.key).toBe(first.key);
    expect(retried.results).toEqual(first.results.map(replayOf));
    expect(sent).toHaveLength(3);
  });

  it('the derivation is the documented one (key-spec.md, "MCP call keys")', () => {
    const guardedKey = 'dcbda5bbb4d0e8a156bce07e6bfdb07d5360ee6a5fb37e11adec9ebb3cdcc48a';
    // sha256('{"mcpCall":{"arguments":{"to":"ada"},"key":"dcbd…c48a","n":0,"tool":"send_email"},"v":1}')
    expect(mcpCallKey(guardedKey, 'send_email', { to: 'ada' }, 0)).toBe(
      '0980e947df9399f345939a78c4cf4e5d7204d6943c40f73395aa8c166bcb07ea',
    );
    expect(mcpCallKey(guardedKey, 'send_email', undefined, 0)).toBe(
      mcpCallKey(guardedKey, 'send_email', {}, 0),
    );
    expect(() => mcpCallKey(guardedKey, 'send_email', {}, -1)).toThrow(TypeError);
  });
});
