// @toolfence/mcp, what is not an outcome: a server's own refusal ("not run") and a tool's isError
// result. A real McpServer and Client of @modelcontextprotocol/sdk over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  Guard,
  Idempotency,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  MemoryStore,
} from '@toolfence/core';
import {
  fenceMcpClient,
  fenceMcpServer,
  McpServerNotRunError,
  McpToolError,
  mcpToolPolicies,
  NO_EFFECT_META,
  NOT_RECORDED_META,
  NOT_RUN_META,
  notRunOf,
  stoppedCallOf,
} from '@toolfence/mcp';
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
        {
          tool: 'refund_order',
          arguments: refundArgs,
          runId: 'conversation-1',
          policy: policies.refund_order!,
        },
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
    expect(notRunOf(conflict)).toEqual({
      code: 'IDEMPOTENCY_CONFLICT',
      retryable: false,
      tool: 'refund_order',
    });
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

/** A server with one tool that answers `failures` isError results, then succeeds; counts runs. */
function flakyToolServer(
  annotations: { idempotentHint?: boolean },
  options: { failures?: number; noEffect?: boolean; errorResults?: 'failure' | 'outcome' } = {},
) {
  const server = createPaymentsServer(new PaymentsProvider());
  const state = { runs: 0 };
  server.registerTool(
    'sync_crm',
    { inputSchema: { contact: z.string() }, annotations },
    async ({ contact }) => {
      state.runs += 1;
      if (state.runs <= (options.failures ?? 1)) {
        return {
          isError: true,
          content: [{ type: 'text', text: 'CRM answered 503, try again' }],
          ...(options.noEffect === true ? { _meta: { [NO_EFFECT_META]: true } } : {}),
        };
      }
      return { content: [{ type: 'text', text: `synced ${contact} (run ${state.runs})` }] };
    },
  );
  const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
  fenceMcpServer(server, { guard, errorResults: options.errorResults });
  return { server, state, guard };
}

const syncCall = { name: 'sync_crm', arguments: { contact: 'ada' }, _meta: { idempotencyKey: 'sync-1' } };

describe('an isError result is a failure', () => {
  it('IDEMPOTENT: the failure is released, not replayed; the retry runs, then replays', async () => {
    const { server, state } = flakyToolServer({ idempotentHint: true });
    const client = await connect(server);
    const first = (await client.callTool(syncCall)) as CallToolResult;
    expect(first.isError).toBe(true);
    expect(first.content).toEqual([{ type: 'text', text: 'CRM answered 503, try again' }]);
    expect(first._meta?.[NOT_RECORDED_META]).toBe(true);
    const second = (await client.callTool(syncCall)) as CallToolResult;
    const third = (await client.callTool(syncCall)) as CallToolResult;
    expect(second.content).toEqual([{ type: 'text', text: 'synced ada (run 2)' }]);
    expect(third).toEqual(replayOf(second));
    expect(state.runs).toBe(2);
  });

  it('EFFECTFUL: indeterminate, never re-run; unless the result says it had no effect', async () => {
    const plain = flakyToolServer({});
    const client = await connect(plain.server);
    for (let attempt = 0; attempt < 2; attempt++) {
      const result = (await client.callTool(syncCall)) as CallToolResult;
      expect(stoppedCallOf(result)).toMatchObject({
        code: 'INDETERMINATE_OUTCOME',
        reasonType: 'McpToolError',
      });
    }
    expect(plain.state.runs).toBe(1);

    const vouched = flakyToolServer({}, { noEffect: true });
    const other = await connect(vouched.server);
    const refused = (await other.callTool(syncCall)) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(refused._meta).toEqual({ [NO_EFFECT_META]: true, [NOT_RECORDED_META]: true });
    const retried = (await other.callTool(syncCall)) as CallToolResult;
    expect(retried.content).toEqual([{ type: 'text', text: 'synced ada (run 2)' }]);
    expect(vouched.state.runs).toBe(2);
  });

  it("errorResults: 'outcome' records the error result and replays it (per tool)", async () => {
    const { server, state } = flakyToolServer({ idempotentHint: true }, { errorResults: 'outcome' });
    const client = await connect(server);
    const first = (await client.callTool(syncCall)) as CallToolResult;
    const second = (await client.callTool(syncCall)) as CallToolResult;
    expect(first.isError).toBe(true);
    expect(second).toEqual(replayOf(first));
    expect(state.runs).toBe(1);
    expect(() =>
      fenceMcpServer(createPaymentsServer(new PaymentsProvider()), {
        guard: new Guard({ store: new MemoryStore() }),
        errorResults: { sync_crm: 'later' as 'outcome' },
      }),
    ).toThrow(/errorResults/);
  });

  it('client: inside a guarded call the error result rejects with McpToolError; the retry runs', async () => {
    // A server without toolfence: the client's own guard is all there is.
    const server = createPaymentsServer(new PaymentsProvider());
    let runs = 0;
    server.registerTool('sync_crm', { inputSchema: { contact: z.string() } }, async () => {
      runs += 1;
      return runs === 1
        ? { isError: true, content: [{ type: 'text', text: 'CRM answered 503' }] }
        : { content: [{ type: 'text', text: 'synced' }] };
    });
    const client = fenceMcpClient(await connect(server));
    const guard = new Guard({ store: new MemoryStore() });
    const step = (kind: 'idempotent' | 'effectful', runId: string) =>
      guard.run({ tool: 'sync_crm', arguments: { contact: 'ada' }, runId, policy: { kind } }, () =>
        client.callTool({ name: 'sync_crm', arguments: { contact: 'ada' } }),
      );
    const failed = await step(Idempotency.IDEMPOTENT, 'r1').catch((error: unknown) => error);
    expect(McpToolError.isInstance(failed)).toBe(true);
    expect((failed as McpToolError).message).toMatch(/CRM answered 503/);
    expect(await step(Idempotency.IDEMPOTENT, 'r1')).toEqual({ content: [{ type: 'text', text: 'synced' }] });
    expect(runs).toBe(2);
    // EFFECTFUL on an unguarded server: the failure may have had an effect.
    runs = 0;
    const unknown = await step(Idempotency.EFFECTFUL, 'r2').catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(unknown)).toBe(true);
    expect(runs).toBe(1);
    // Outside a guarded call the result is returned as it is.
    runs = 0;
    expect((await client.callTool({ name: 'sync_crm', arguments: { contact: 'x' } })).isError).toBe(true);
  });

  it("client: an EFFECTFUL policy of mcpToolPolicies releases on a guarded server's not-recorded failure", async () => {
    const { server, state } = flakyToolServer({ idempotentHint: true });
    const client = fenceMcpClient(await connect(server));
    const policies = mcpToolPolicies(await client.listTools(), {
      policies: { sync_crm: { kind: Idempotency.EFFECTFUL } },
    });
    const guard = new Guard({ store: new MemoryStore() });
    const step = () =>
      guard.run(
        { tool: 'sync_crm', arguments: { contact: 'ada' }, runId: 'r', policy: policies.sync_crm! },
        () => client.callTool({ name: 'sync_crm', arguments: { contact: 'ada' } }),
      );
    const failed = await step().catch((error: unknown) => error);
    expect(McpToolError.isInstance(failed) && failed.notRecorded).toBe(true);
    const retried = (await step()) as CallToolResult;
    expect(retried.content).toEqual([{ type: 'text', text: 'synced ada (run 2)' }]);
    expect(state.runs).toBe(2);
  });
});
