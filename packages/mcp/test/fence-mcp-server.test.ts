// @toolfence/mcp in one process: a real McpServer and Client of @modelcontextprotocol/sdk over
// the SDK's InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import {
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
  MemoryStore,
  PolicyError,
} from '@toolfence/core';
import {
  fenceMcpClient,
  fenceMcpServer,
  isReplayed,
  mcpCallKey,
  mcpToolPolicies,
  policyFromAnnotations,
  stoppedCallOf,
  toolfenceCapabilityOf,
} from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';
import { replayOf, withoutReplayMarker } from './replayed.js';

async function connect(server: McpServer): Promise<Client> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  await client.connect(clientTransport);
  return client;
}

function refundCall(key: string | undefined, orderId = 'A-100', amountCents = 3000) {
  return {
    name: 'refund_order',
    arguments: { orderId, amountCents },
    ...(key === undefined ? {} : { _meta: { idempotencyKey: key } }),
  };
}

function setup(options: Partial<Parameters<typeof fenceMcpServer>[1]> = {}) {
  const events: GuardEvent[] = [];
  const guard = new Guard({
    store: new MemoryStore(),
    tenant: 'acme',
    onEvent: (event) => events.push(event),
  });
  const provider = new PaymentsProvider();
  const server = fenceMcpServer(createPaymentsServer(provider), { guard, ...options });
  return { guard, provider, server, events };
}

describe('fenceMcpServer', () => {
  it('runs a tool once per client key; the repeat is the identical recorded result', async () => {
    const { provider, server } = setup();
    const client = await connect(server);
    const first = await client.callTool(refundCall('refund-A-100'));
    const second = await client.callTool(refundCall('refund-A-100'));
    expect(provider.refunds).toHaveLength(1);
    expect(first.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
    expect(second).toEqual(replayOf(first));
    // Another key is another call.
    const third = await client.callTool(refundCall('refund-A-100-second'));
    expect(provider.refunds).toHaveLength(2);
    expect(third.structuredContent).toEqual({ refundId: 're_2', orderId: 'A-100', amountCents: 3000 });
  });

  it('a call in flight with the same key waits for it and gets its answer', async () => {
    const { provider, server } = setup();
    let release!: () => void;
    provider.hold = new Promise((resolve) => {
      release = resolve;
    });
    const paid = new Promise<void>((resolve) => {
      provider.onPaid = resolve;
    });
    const client = await connect(server);
    const first = client.callTool(refundCall('k-race'));
    await paid;
    const second = client.callTool(refundCall('k-race'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    const [a, b] = await Promise.all([first, second]);
    expect(provider.refunds).toHaveLength(1);
    expect(b).toEqual(replayOf(a));
  });

  it('two servers on one store (two clients) racing one key: one execution', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const provider = new PaymentsProvider();
    const clients = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        connect(fenceMcpServer(createPaymentsServer(provider, `replica-${n}`), { guard })),
      ),
    );
    const results = await Promise.all(clients.map((client) => client.callTool(refundCall('k-four'))));
    expect(provider.refunds).toHaveLength(1);
    // One ran; the three others got its result, marked replayed.
    expect(results.filter((result) => isReplayed(result))).toHaveLength(3);
    for (const result of results)
      expect(withoutReplayMarker(result)).toEqual(withoutReplayMarker(results[0]));
  });

  it('the key is scoped to the tenant and tool; reused with other arguments it is a conflict', async () => {
    const { provider, server } = setup({ tenant: (extra) => extra._meta?.tenant as string | undefined });
    const client = await connect(server);
    await client.callTool({ ...refundCall(undefined), _meta: { idempotencyKey: 'k', tenant: 'acme' } });
    await client.callTool({ ...refundCall(undefined), _meta: { idempotencyKey: 'k', tenant: 'globex' } });
    expect(provider.refunds).toHaveLength(2);
    const conflict = (await client.callTool({
      ...refundCall(undefined, 'A-100', 9999),
      _meta: { idempotencyKey: 'k', tenant: 'acme' },
    })) as CallToolResult;
    expect(conflict.isError).toBe(true);
    expect(JSON.stringify(conflict.content)).toMatch(/different arguments/);
    expect(provider.refunds).toHaveLength(2);
  });

  it('without a client key, the arguments make the key in the run (runId option); no run id fails closed', async () => {
    const { provider, server } = setup({ runId: (extra) => extra._meta?.conversation as string | undefined });
    const client = await connect(server);
    const call = { ...refundCall(undefined), _meta: { conversation: 'c-1' } };
    const first = await client.callTool(call);
    const second = await client.callTool(call);
    expect(second).toEqual(replayOf(first));
    expect(provider.refunds).toHaveLength(1);
    // InMemoryTransport has no session id: no run id, so the call is refused before it runs.
    const refused = (await client.callTool(refundCall(undefined))) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/run id/i);
    expect(provider.refunds).toHaveLength(1);
  });

  it('policies come from the annotations; an explicit policy wins', async () => {
    expect(policyFromAnnotations({ readOnlyHint: true }).kind).toBe(Idempotency.READ_ONLY);
    expect(policyFromAnnotations({ idempotentHint: true }).kind).toBe(Idempotency.IDEMPOTENT);
    expect(policyFromAnnotations({ destructiveHint: false }).kind).toBe(Idempotency.EFFECTFUL);
    expect(policyFromAnnotations(undefined).kind).toBe(Idempotency.EFFECTFUL);

    const { events, server } = setup({ policies: { set_address: { kind: Idempotency.READ_ONLY } } });
    const client = await connect(server);
    const lookup = { name: 'lookup_order', arguments: { orderId: 'A-1' }, _meta: { idempotencyKey: 'look' } };
    await client.callTool(lookup);
    await client.callTool(lookup);
    const address = {
      name: 'set_address',
      arguments: { orderId: 'A-1', address: 'x' },
      _meta: { idempotencyKey: 'a' },
    };
    await client.callTool(address);
    await client.callTool(address);
    // READ_ONLY (annotation) and the explicit READ_ONLY over idempotentHint: nothing claimed.
    expect(events.filter((event) => event.type === 'tool.started')).toHaveLength(0);
    await client.callTool(refundCall('r'));
    await client.callTool(refundCall('r'));
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('policiesFromAnnotations: false leaves a tool without a policy unguarded', async () => {
    const { provider, server } = setup({ policiesFromAnnotations: false });
    const client = await connect(server);
    await client.callTool(refundCall('same'));
    await client.callTool(refundCall('same'));
    expect(provider.refunds).toHaveLength(2);
  });

  it('an effectful tool whose reply is lost is indeterminate: an isError result naming the key, never re-run', async () => {
    const stopped: string[] = [];
    const { guard, provider, server } = setup({ onStop: (error) => stopped.push(error.key) });
    provider.failAfterPaying = true;
    const client = await connect(server);
    const first = (await client.callTool(refundCall('k-lost'))) as CallToolResult;
    const second = (await client.callTool(refundCall('k-lost'))) as CallToolResult;
    expect(provider.refunds).toHaveLength(1);
    for (const result of [first, second]) {
      expect(result.isError).toBe(true);
      expect((result.content[0] as { text: string }).text).toMatch(
        /outcome of tool "refund_order" is unknown/,
      );
      const body = stoppedCallOf(result);
      expect(body).toMatchObject({
        code: 'INDETERMINATE_OUTCOME',
        tool: 'refund_order',
        tenant: 'acme',
        idempotencyKey: 'k-lost',
      });
      // refund_order has an output schema: the body is in _meta only (a client validates
      // structuredContent against the schema even on error results).
      expect(result.structuredContent).toBeUndefined();
    }
    const key = stoppedCallOf(first)?.key as string;
    expect(stopped).toEqual([key, key]);
    expect((await guard.inspect(key))?.state).toBe('indeterminate');
    // The operator settles it; the repeat then replays the stated outcome.
    await guard.resolve(key, {
      outcome: {
        content: [{ type: 'text', text: 'settled by an operator' }],
        structuredContent: { refundId: 're_1', orderId: 'A-100', amountCents: 3000 },
      },
    });
    const third = (await client.callTool(refundCall('k-lost'))) as CallToolResult;
    expect(third.structuredContent).toEqual({ refundId: 're_1', orderId: 'A-100', amountCents: 3000 });
    expect(provider.refunds).toHaveLength(1);
  });

  it('a tool without an output schema gets the body in structuredContent too', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const server = fenceMcpServer(createPaymentsServer(new PaymentsProvider()), { guard });
    let sent = 0;
    server.registerTool('send_email', { inputSchema: { to: z.string() } }, async () => {
      sent += 1;
      throw new Error('SMTP timeout');
    });
    const client = await connect(server);
    const result = (await client.callTool({
      name: 'send_email',
      arguments: { to: 'a@b' },
      _meta: { idempotencyKey: 'e' },
    })) as CallToolResult;
    expect(sent).toBe(1);
    expect(result.structuredContent).toEqual({ toolfence: stoppedCallOf(result) });
  });

  it('guards tools registered after it, renamed tools and replaced handlers', async () => {
    const { server } = setup();
    let runs = 0;
    const late = server.registerTool('late_charge', { inputSchema: { id: z.string() } }, async () => {
      runs += 1;
      return { content: [{ type: 'text', text: `charged ${runs}` }] };
    });
    const client = await connect(server);
    const call = (name: string, key: string) =>
      client.callTool({ name, arguments: { id: 'x' }, _meta: { idempotencyKey: key } });
    await call('late_charge', 'k1');
    await call('late_charge', 'k1');
    expect(runs).toBe(1);
    late.update({
      callback: async () => {
        runs += 10;
        return { content: [{ type: 'text', text: 'replaced' }] };
      },
    });
    await call('late_charge', 'k2');
    await call('late_charge', 'k2');
    expect(runs).toBe(11);
    late.update({ name: 'renamed_charge' });
    await call('renamed_charge', 'k2'); // another tool name: another key
    await call('renamed_charge', 'k2');
    expect(runs).toBe(21);
  });

  it('refuses bad options and a second fencing', () => {
    const guard = new Guard({ store: new MemoryStore() });
    const server = createPaymentsServer(new PaymentsProvider());
    expect(() =>
      fenceMcpServer(server, {
        guard,
        policies: { refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['order'] } },
      }),
    ).toThrow(PolicyError);
    expect(() =>
      fenceMcpServer(server, {
        guard,
        policies: { refund_order: { kind: Idempotency.EFFECTFUL, key: 'call' } },
      }),
    ).toThrow(/per-connection counter/);
    fenceMcpServer(server, { guard });
    expect(() => fenceMcpServer(server, { guard })).toThrow(/already fenced/);
    expect(() => fenceMcpServer({} as McpServer, { guard })).toThrow(/McpServer/);
  });

  it('refuses a client key that is not a non-empty string, before running anything', async () => {
    const { provider, server } = setup();
    const client = await connect(server);
    for (const key of ['', 42, 'x'.repeat(256)]) {
      const result = (await client.callTool({
        ...refundCall(undefined),
        _meta: { idempotencyKey: key },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
    }
    expect(provider.refunds).toHaveLength(0);
  });

  it('advertises itself in capabilities.experimental.toolfence', async () => {
    const { server } = setup({ idempotencyKeyMeta: 'io.example/key' });
    const client = await connect(server);
    expect(toolfenceCapabilityOf(client)).toEqual({
      version: 1,
      idempotencyKeyMeta: 'io.example/key',
      idempotencyKeyParam: 'idempotencyKey',
    });
    const plain = await connect(createPaymentsServer(new PaymentsProvider()));
    expect(toolfenceCapabilityOf(plain)).toBeUndefined();
  });
});

describe('fenceMcpClient', () => {
  it('forwards a key derived from the guard key in _meta (the advertised field); outside a guarded call it adds nothing', async () => {
    const seen: unknown[] = [];
    const guard = new Guard({ store: new MemoryStore() });
    const server = createPaymentsServer(new PaymentsProvider());
    server.registerTool('echo_meta', { inputSchema: { n: z.number() } }, async (_args, extra) => {
      seen.push(extra._meta);
      return { content: [{ type: 'text', text: 'ok' }] };
    });
    fenceMcpServer(server, {
      guard: new Guard({ store: new MemoryStore() }),
      idempotencyKeyMeta: 'io.example/key',
      policies: { echo_meta: { kind: Idempotency.READ_ONLY } },
    });
    const client = fenceMcpClient(await connect(server));
    const policy = { kind: Idempotency.EFFECTFUL };
    const key = await guard.run({ tool: 'echo_meta', arguments: { n: 1 }, runId: 'r', policy }, async () => {
      await client.callTool({ name: 'echo_meta', arguments: { n: 1 } });
      return currentToolCall()?.idempotencyKey;
    });
    await client.callTool({ name: 'echo_meta', arguments: { n: 2 } });
    await guard.run({ tool: 'echo_meta', arguments: { n: 3 }, runId: 'r', policy }, () =>
      client.callTool({ name: 'echo_meta', arguments: { n: 3 }, _meta: { 'io.example/key': 'mine' } }),
    );
    // The key sent is derived from the guarded call's (one per callTool: call-keys.test.ts).
    expect(seen).toEqual([
      { 'io.example/key': mcpCallKey(key as string, 'echo_meta', { n: 1 }, 0) },
      undefined,
      { 'io.example/key': 'mine' },
    ]);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  it("turns a server's indeterminate report into IndeterminateOutcomeError; 'report' returns the result", async () => {
    const { provider, server } = setup();
    provider.failAfterPaying = true;
    const connected = await connect(server);
    const client = fenceMcpClient(connected);
    const error = await client.callTool(refundCall('k')).catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect((error as IndeterminateOutcomeError).tool).toBe('refund_order');
    expect((error as Error).message).toMatch(/MCP server "payments"/);
    const { server: other, provider: otherProvider } = setup();
    otherProvider.failAfterPaying = true;
    const reporting = fenceMcpClient(await connect(other), { onIndeterminate: 'report' });
    const result = (await reporting.callTool(refundCall('k'))) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(stoppedCallOf(result)?.code).toBe('INDETERMINATE_OUTCOME');
  });

  it('mcpToolPolicies derives policies from annotations only with trustAnnotations: true', async () => {
    const client = await connect(createPaymentsServer(new PaymentsProvider()));
    const listed = await client.listTools();
    expect(mcpToolPolicies(listed)).toEqual({});
    const explicit = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;
    // EFFECTFUL policies come back as copies that also release on a server's "not run".
    const releasing = { isNoEffectError: expect.any(Function) };
    const fromExplicit = mcpToolPolicies(listed, { policies: { refund_order: explicit } });
    expect(fromExplicit).toEqual({ refund_order: { ...explicit, ...releasing } });
    expect(fromExplicit.refund_order?.isNoEffectError?.(new Error('not a refusal'))).toBe(false);
    expect(mcpToolPolicies(listed, { trustAnnotations: true })).toEqual({
      refund_order: { kind: Idempotency.EFFECTFUL, ...releasing },
      set_address: { kind: Idempotency.IDEMPOTENT },
      lookup_order: { kind: Idempotency.READ_ONLY },
    });
    expect(() => mcpToolPolicies(listed, { policies: { refund: explicit } })).toThrow(PolicyError);
  });
});
