// What the protocol does on a broken stream, a multi round-trip call and a task, with raw
// JSON-RPC where SDK 1.32 lacks the feature. A guarded McpServer over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceMcpClient, fenceMcpServer, notRunOf, stoppedCallOf } from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPaymentsServer, PaymentsProvider } from './payments-server.js';
import { type RawAnswer, rawSession } from './raw-json-rpc.js';
import { replayOf } from './replayed.js';

async function until(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for a condition');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const refund = (key: string) => ({
  name: 'refund_order',
  arguments: { orderId: 'A-100', amountCents: 3000 },
  _meta: { idempotencyKey: key },
});

describe('a re-issued request (new id, same key)', () => {
  it('after the first was cancelled mid-body (a closed stream, 2026-07-28): never runs again', async () => {
    const provider = new PaymentsProvider();
    let release!: () => void;
    provider.hold = new Promise((resolve) => {
      release = resolve;
    });
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const session = await rawSession(fenceMcpServer(createPaymentsServer(provider), { guard }));
    void session.request(1, 'tools/call', refund('k-cancel'));
    await until(() => provider.refunds.length === 1);
    // The client gives up on request 1 (SDK 1.32's cancellation; in 2026-07-28 closing the
    // response stream means the same) and re-issues it under a new id.
    await session.notify('notifications/cancelled', { requestId: 1, reason: 'stream closed' });
    const reissued = session.request(2, 'tools/call', refund('k-cancel'));
    release();
    const answer = await reissued;
    expect(provider.refunds).toHaveLength(1);
    // The body went on after the cancellation; its outcome was recorded and is replayed.
    expect(answer.result?.structuredContent).toEqual({
      refundId: 're_1',
      orderId: 'A-100',
      amountCents: 3000,
    });
  });

  it('after a body that honoured the cancellation and stopped after paying: indeterminate, never run again', async () => {
    const server = createPaymentsServer(new PaymentsProvider());
    let paid = 0;
    server.registerTool('wire_funds', { inputSchema: { to: z.string() } }, async (_args, extra) => {
      paid += 1;
      // The transfer is out; the handler then waits for its confirmation and stops when aborted.
      await new Promise((_resolve, reject) =>
        extra.signal.addEventListener('abort', () => reject(new Error('aborted while confirming'))),
      );
      return { content: [{ type: 'text', text: 'never' }] };
    });
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const session = await rawSession(fenceMcpServer(server, { guard }));
    const call = { name: 'wire_funds', arguments: { to: 'DE00' }, _meta: { idempotencyKey: 'w-1' } };
    void session.request(1, 'tools/call', call);
    await until(() => paid === 1);
    await session.notify('notifications/cancelled', { requestId: 1 });
    for (const id of [2, 3]) {
      const answer = await session.request(id, 'tools/call', call);
      expect(stoppedCallOf(answer.result)).toMatchObject({
        code: 'INDETERMINATE_OUTCOME',
        idempotencyKey: 'w-1',
      });
    }
    expect(paid).toBe(1);
    // The cancelled request itself is never answered (the SDK drops the answer of a cancelled request).
    expect(session.answers.has(1)).toBe(false);
  });
});

describe('a multi round-trip call (input_required, 2026-07-28)', () => {
  /** A transfer that asks for a confirmation on its first round and pays on the next one. */
  function confirmingServer() {
    const server = createPaymentsServer(new PaymentsProvider());
    const state = { rounds: 0, payments: 0 };
    server.registerTool('transfer', { inputSchema: { amountCents: z.number() } }, async ({ amountCents }) => {
      state.rounds += 1;
      // SDK 1.32 strips inputResponses from params: this test tool counts rounds instead of
      // reading the answer.
      if (state.rounds === 1) {
        return {
          inputRequests: {
            confirm: {
              method: 'elicitation/create',
              params: {
                message: `Send ${amountCents} cents?`,
                requestedSchema: { type: 'object', properties: {} },
              },
            },
          },
          requestState: 'opaque-1',
        } as unknown as { content: [] };
      }
      state.payments += 1;
      return { content: [{ type: 'text', text: `sent ${amountCents} (#${state.payments})` }] };
    });
    return { server, state };
  }

  it('the input_required round is not recorded; the final round runs the effect once; a re-issue replays it', async () => {
    const { server, state } = confirmingServer();
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const session = await rawSession(fenceMcpServer(server, { guard }));
    const call = { name: 'transfer', arguments: { amountCents: 500 }, _meta: { idempotencyKey: 't-1' } };
    const round1 = await session.request(1, 'tools/call', call);
    expect(round1.result).toMatchObject({ requestState: 'opaque-1', inputRequests: { confirm: {} } });
    const round2 = await session.request(2, 'tools/call', {
      ...call,
      inputResponses: { confirm: { result: { action: 'accept', content: {} } } },
      requestState: 'opaque-1',
    });
    expect(round2.result?.content).toEqual([{ type: 'text', text: 'sent 500 (#1)' }]);
    // The final answer lost, the same round re-issued: replayed, not paid again.
    const reissued = await session.request(3, 'tools/call', {
      ...call,
      inputResponses: { confirm: { result: { action: 'accept', content: {} } } },
      requestState: 'opaque-1',
    });
    expect(reissued.result).toEqual(replayOf(round2.result));
    expect(state).toEqual({ rounds: 2, payments: 1 });
  });

  it('a fenced client sends the same key on every round of one call', async () => {
    const seen: unknown[] = [];
    const server = createPaymentsServer(new PaymentsProvider());
    server.registerTool(
      'echo',
      { inputSchema: { n: z.number() }, annotations: { readOnlyHint: true } },
      async (_a, extra) => {
        seen.push(extra._meta?.idempotencyKey);
        return { content: [{ type: 'text', text: 'ok' }] };
      },
    );
    fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore() }) });
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    await server.connect(serverTransport);
    const client = fenceMcpClient(new Client({ name: 'c', version: '1.0.0' }));
    await client.connect(clientTransport);
    const round = {
      name: 'echo',
      arguments: { n: 1 },
      inputResponses: { q: { result: {} } },
      requestState: 's',
    };
    await new Guard({ store: new MemoryStore() }).run(
      { tool: 'flow', arguments: {}, runId: 'r', policy: { kind: Idempotency.EFFECTFUL } },
      async () => {
        await client.callTool({ name: 'echo', arguments: { n: 1 } });
        await client.callTool(round as Parameters<Client['callTool']>[0]); // round 2 of the same call
        await client.callTool({ name: 'echo', arguments: { n: 1 } }); // a second, new call
      },
    );
    expect(seen[0]).toBe(seen[1]);
    expect(seen[2]).not.toBe(seen[0]);
    expect(new Set(seen).size).toBe(2);
  });
});

describe('a task tool (experimental.tasks.registerToolTask)', () => {
  it('a re-issued call with the same key gets the same task, not a second one', async () => {
    const taskStore = new InMemoryTaskStore();
    const server = new McpServer(
      { name: 'jobs', version: '1.0.0' },
      { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore },
    );
    let started = 0;
    server.experimental.tasks.registerToolTask(
      'export_ledger',
      { inputSchema: { month: z.string() }, execution: { taskSupport: 'required' } },
      {
        createTask: async ({ month }, extra) => {
          started += 1;
          const task = await extra.taskStore.createTask({ ttl: 60_000 });
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
            content: [{ type: 'text', text: `ledger ${month}` }],
          });
          return { task };
        },
        getTask: async (_args, extra) => (await extra.taskStore.getTask(extra.taskId)) as never,
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const session = await rawSession(fenceMcpServer(server, { guard }));
    const call = {
      name: 'export_ledger',
      arguments: { month: '2026-11' },
      task: { ttl: 60_000 },
      _meta: { idempotencyKey: 'export-1' },
    };
    const first = await session.request(1, 'tools/call', call);
    const reissued = await session.request(2, 'tools/call', call);
    const taskIdOf = (answer: RawAnswer) => (answer.result?.task as { taskId?: string } | undefined)?.taskId;
    const firstTask = { taskId: taskIdOf(first) as string };
    expect(firstTask.taskId).toMatch(/^[0-9a-f]+$/);
    expect(taskIdOf(reissued)).toBe(firstTask.taskId);
    expect(started).toBe(1);
    // The task is the real one: its result is there.
    const result = await session.request(3, 'tasks/result', { taskId: firstTask.taskId });
    expect(result.result?.content).toEqual([{ type: 'text', text: 'ledger 2026-11' }]);
    // Another key is another task.
    const other = await session.request(4, 'tools/call', { ...call, _meta: { idempotencyKey: 'export-2' } });
    expect(taskIdOf(other)).not.toBe(firstTask.taskId);
    expect(started).toBe(2);
  });
});

describe("inFlight: 'answer'", () => {
  it('a duplicate of a running call is answered "in progress" at once; after it finished, the retry replays', async () => {
    const provider = new PaymentsProvider();
    let release!: () => void;
    provider.hold = new Promise((resolve) => {
      release = resolve;
    });
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const session = await rawSession(
      fenceMcpServer(createPaymentsServer(provider), { guard, inFlight: 'answer' }),
    );
    const first = session.request(1, 'tools/call', refund('k-busy'));
    await until(() => provider.refunds.length === 1);
    const started = Date.now();
    const duplicate = await session.request(2, 'tools/call', refund('k-busy'));
    const answeredMs = Date.now() - started;
    expect(notRunOf(duplicate.result)).toEqual({
      code: 'OUTCOME_PENDING',
      retryable: true,
      tool: 'refund_order',
    });
    // The default would wait up to 2 × leaseMs (60 s) for the first call.
    expect(answeredMs).toBeLessThan(1_000);
    release();
    const answer = await first;
    const retried = await session.request(3, 'tools/call', refund('k-busy'));
    expect(retried.result).toEqual(replayOf(answer.result));
    expect(provider.refunds).toHaveLength(1);
    expect(() =>
      fenceMcpServer(createPaymentsServer(provider), { guard, inFlight: 'later' as 'answer' }),
    ).toThrow(/inFlight/);
  });
});
