// @toolfence/mcp as a client writes it on the wire: raw JSON-RPC to a guarded McpServer (SDK
// 1.32) over InMemoryTransport. The key where SEP-3182 put it (top-level params.idempotencyKey),
// re-issues with new request ids, and the reuse of an id on another connection.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Guard, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, notRunOf } from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';
import { rawSession } from './raw-json-rpc.js';
import { replayOf } from './replayed.js';

function setup() {
  const provider = new PaymentsProvider();
  const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
  const serve = () => fenceMcpServer(createPaymentsServer(provider), { guard });
  return { provider, serve };
}

const refund = (extra: Record<string, unknown>, orderId = 'A-100') => ({
  name: 'refund_order',
  arguments: { orderId, amountCents: 3000 },
  ...extra,
});

describe('the client key on the wire', () => {
  it('top-level params.idempotencyKey is a key: a re-issue with a new request id replays', async () => {
    const { provider, serve } = setup();
    const session = await rawSession(serve());
    const first = await session.request(1, 'tools/call', refund({ idempotencyKey: 'top-1' }));
    const reissued = await session.request(2, 'tools/call', refund({ idempotencyKey: 'top-1' }));
    expect(first.result?.structuredContent).toEqual({
      refundId: 're_1',
      orderId: 'A-100',
      amountCents: 3000,
    });
    expect(reissued.result).toEqual(replayOf(first.result));
    expect(provider.refunds).toHaveLength(1);
    // The same key in _meta is the same key (from a client that puts it there).
    const inMeta = await session.request(3, 'tools/call', refund({ _meta: { idempotencyKey: 'top-1' } }));
    expect(inMeta.result).toEqual(replayOf(first.result));
    expect(provider.refunds).toHaveLength(1);
  });

  it('both set and equal: that key; both set and different: refused, not run', async () => {
    const { provider, serve } = setup();
    const session = await rawSession(serve());
    const equal = await session.request(
      1,
      'tools/call',
      refund({ idempotencyKey: 'k-1', _meta: { idempotencyKey: 'k-1' } }),
    );
    expect(equal.result?.isError).toBeUndefined();
    const differ = await session.request(
      2,
      'tools/call',
      refund({ idempotencyKey: 'k-2', _meta: { idempotencyKey: 'k-3' } }, 'B-7'),
    );
    expect(differ.result?.isError).toBe(true);
    expect(notRunOf(differ.result)).toEqual({
      code: 'INVALID_IDEMPOTENCY_KEY',
      retryable: false,
      tool: 'refund_order',
    });
    expect(JSON.stringify(differ.result?.content)).toMatch(/both set and differ/);
    const malformed = await session.request(3, 'tools/call', refund({ idempotencyKey: 42 }, 'B-8'));
    expect(notRunOf(malformed.result)).toMatchObject({
      code: 'INVALID_IDEMPOTENCY_KEY',
    });
    expect(provider.refunds.map((r) => r.orderId)).toEqual(['A-100']);
  });

  it('the JSON-RPC id is never a key: the same id on another connection with another key runs', async () => {
    const { provider, serve } = setup();
    const one = await rawSession(serve());
    const two = await rawSession(serve());
    await one.request(7, 'tools/call', refund({ _meta: { idempotencyKey: 'first' } }));
    const other = await two.request(7, 'tools/call', refund({ _meta: { idempotencyKey: 'second' } }));
    expect(other.result?.structuredContent).toMatchObject({ refundId: 're_2' });
    expect(provider.refunds).toHaveLength(2);
  });

  it("fenceMcpClient keeps a caller's top-level key and adds none of its own", async () => {
    const { provider, serve } = setup();
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await serve().connect(serverTransport);
    const client = fenceMcpClient(new Client({ name: 'c', version: '1.0.0' }));
    await client.connect(clientTransport);
    const guard = new Guard({ store: new MemoryStore() });
    const policy = { kind: 'effectful' } as const;
    let run = 0;
    const call = () =>
      guard.run({ tool: 'refund_order', arguments: {}, runId: `r-${run++}`, policy }, () =>
        // The SDK's types know no top-level key; the wire does.
        client.callTool(refund({ idempotencyKey: 'callers-own' }) as Parameters<Client['callTool']>[0]),
      );
    const first = await call();
    const second = await call(); // another guarded call (another run), the same caller's key
    expect(second).toEqual(replayOf(first));
    expect(provider.refunds).toHaveLength(1);
  });
});
