// @toolfence/mcp, what is not an outcome: a server's own refusal ("not run") and a tool's isError
// result. A real McpServer and Client of @modelcontextprotocol/sdk over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Guard, type IdempotencyStore, Idempotency, MemoryStore } from '@toolfence/core';
import {
  fenceMcpClient,
  fenceMcpServer,
  McpServerNotRunError,
  mcpToolPolicies,
  NOT_RUN_META,
  notRunOf,
} from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';

async function connect(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(clientTransport);
  return client;
}

/** A MemoryStore whose claims fail (as an unreachable Redis's would) while `down` is true. */
function flakyStore(): { store: IdempotencyStore; setDown(down: boolean): void } {
  const inner = new MemoryStore();
  let down = false;
  const store = new Proxy(inner, {
    get(target, property) {
      if (property === 'claim' && down) {
        return async () => {
          throw new Error('connect ECONNREFUSED 127.0.0.1:6390');
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, setDown: (value) => (down = value) };
}

const refundArgs = { orderId: 'A-100', amountCents: 3000 };

describe("a server's refusal is not an outcome", () => {
  it('store unavailable, then recovered: the client retry runs the refund once', async () => {
    const flaky = flakyStore();
    const provider = new PaymentsProvider();
    const server = fenceMcpServer(createPaymentsServer(provider), {
      guard: new Guard({ store: flaky.store, tenant: 'acme' }),
    });
    const client = fenceMcpClient(await connect(server));
    const policies = mcpToolPolicies(await client.listTools(), {
      policies: { refund_order: { kind: Idempotency.EFFECTFUL } },
    });
    const clientGuard = new Guard({ store: new MemoryStore(), tenant: 'agent' });
    const step = () =>
      clientGuard.run(
        { tool: 'refund_order', arguments: refundArgs, runId: 'conversation-1', policy: policies.refund_order! },
        () => client.callTool({ name: 'refund_order', arguments: refundArgs }),
      );

    flaky.setDown(true);
    for (let attempt = 0; attempt < 3; attempt++) {
      const refused = await step().catch((error: unknown) => error);
      expect(McpServerNotRunError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ code: 'STORE_UNAVAILABLE', retryable: true, tool: 'refund_order' });
      // The server's text (which names its store's address) is not in the client's error.
      expect((refused as Error).message).not.toMatch(/6390/);
    }
    expect(provider.refunds).toHaveLength(0);

    flaky.setDown(false);
    const result = (await step()) as CallToolResult;
    expect(result.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
    // And a further retry of the same step replays it (client and server), no second payment.
    expect(await step()).toEqual(result);
    expect(provider.refunds).toHaveLength(1);
  });

  it('the marker is on the isError result of every refusal, with its code and retryability', async () => {
    const flaky = flakyStore();
    const provider = new PaymentsProvider();
    const server = fenceMcpServer(createPaymentsServer(provider), {
      guard: new Guard({ store: flaky.store, tenant: 'acme' }),
    });
    const client = await connect(server); // not fenced: the raw results
    const call = (key: unknown, amountCents = 3000) =>
      client.callTool({
        name: 'refund_order',
        arguments: { orderId: 'A-1', amountCents },
        _meta: { idempotencyKey: key },
      }) as Promise<CallToolResult>;
    flaky.setDown(true);
    const unavailable = await call('k');
    flaky.setDown(false);
    await call('k');
    const conflict = await call('k', 9999);
    const malformed = await call('');
    expect([unavailable, conflict, malformed].map((result) => result.isError)).toEqual([true, true, true]);
    expect(unavailable._meta?.[NOT_RUN_META]).toEqual({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      tool: 'refund_order',
    });
    expect(notRunOf(conflict)).toEqual({ code: 'IDEMPOTENCY_CONFLICT', retryable: false, tool: 'refund_order' });
    expect(notRunOf(malformed)).toEqual({
      code: 'INVALID_IDEMPOTENCY_KEY',
      retryable: false,
      tool: 'refund_order',
    });
    // The text the model reads is the error's own, as before.
    expect(JSON.stringify(conflict.content)).toMatch(/different arguments/);
    expect(provider.refunds).toHaveLength(1);
  });

  it('a tool that ran and failed carries no marker', async () => {
    const provider = new PaymentsProvider();
    provider.failAfterPaying = true;
    const server = fenceMcpServer(createPaymentsServer(provider), {
      guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }),
      policies: { refund_order: { kind: Idempotency.IDEMPOTENT } },
    });
    const client = await connect(server);
    const result = (await client.callTool({
      name: 'refund_order',
      arguments: refundArgs,
      _meta: { idempotencyKey: 'k' },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(notRunOf(result)).toBeUndefined();
    expect(provider.refunds).toHaveLength(1);
  });
});
