// A fenced McpServer speaks the protocol as the plain one does (issue #36): a JSON-RPC error that
// asks the client to act (-32042) passes through, a waiting duplicate hears progress, a replay is
// marked. The SDK's real Client and McpServer over InMemoryTransport.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  LoggingMessageNotificationSchema,
  type McpError,
  UrlElicitationRequiredError,
} from '@modelcontextprotocol/sdk/types.js';
import { Guard, Idempotency, type IdempotencyPolicy, MemoryStore } from '@toolfence/core';
import {
  DEFAULT_MCP_WAIT_TIMEOUT_MS,
  DEFAULT_WAIT_PROGRESS_MS,
  fenceMcpClient,
  fenceMcpServer,
  isClientActionError,
  isReplayed,
  mcpToolPolicies,
  notRunOf,
  REPLAYED_META,
} from '@toolfence/mcp';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

async function connect(server: McpServer, client = new Client({ name: 'test-client', version: '1.0.0' })) {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await server.connect(serverTransport);
  await client.connect(clientTransport);
  return client;
}

const AUTHORISE_URL = 'https://bank.example/authorise?session=s-1';

/**
 * A bank-link tool: until the user has authorised at a URL, it throws the SDK's
 * UrlElicitationRequiredError (nothing done); after that it links the account once per call.
 */
function bankServer(annotations: { idempotentHint?: boolean; readOnlyHint?: boolean } = {}) {
  const server = new McpServer({ name: 'bank', version: '1.0.0' });
  const state = { authorised: false, asked: 0, linked: 0 };
  server.registerTool(
    'link_account',
    { inputSchema: { iban: z.string() }, annotations },
    async ({ iban }) => {
      if (!state.authorised) {
        state.asked += 1;
        throw new UrlElicitationRequiredError([
          {
            mode: 'url',
            elicitationId: 'authorise-1',
            url: AUTHORISE_URL,
            message: 'Authorise toolfence-bank to link your account',
          },
        ]);
      }
      state.linked += 1;
      return { content: [{ type: 'text', text: `linked ${iban} (#${state.linked})` }] };
    },
  );
  return { server, state };
}

const EVERY_STATE = ['in_progress', 'completed', 'indeterminate', 'abandoned', 'lease_expired'] as const;

/** The kinds a tool can be fenced under: by an explicit policy or by its own annotations. */
const kinds: ReadonlyArray<{
  readonly name: string;
  readonly annotations?: { idempotentHint?: boolean; readOnlyHint?: boolean };
  readonly policy?: IdempotencyPolicy;
}> = [
  { name: 'EFFECTFUL by default (no annotations)' },
  { name: 'EFFECTFUL (explicit)', policy: { kind: Idempotency.EFFECTFUL } },
  { name: 'IDEMPOTENT (explicit)', policy: { kind: Idempotency.IDEMPOTENT } },
  { name: 'IDEMPOTENT (idempotentHint)', annotations: { idempotentHint: true } },
  { name: 'READ_ONLY (readOnlyHint)', annotations: { readOnlyHint: true } },
];

const linkCall = {
  name: 'link_account',
  arguments: { iban: 'DE02 1203 0000 0000 2020 51' },
  _meta: { idempotencyKey: 'link-1' },
};

describe('-32042 UrlElicitationRequired passes through and records nothing', () => {
  it('plain server (the reference): the client sees -32042 and its URL', async () => {
    const { server, state } = bankServer();
    const client = await connect(server);
    const error = await client.callTool(linkCall).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect((error as UrlElicitationRequiredError).code).toBe(-32042);
    expect((error as UrlElicitationRequiredError).elicitations[0]?.url).toBe(AUTHORISE_URL);
    expect(state.asked).toBe(1);
  });

  for (const kind of kinds) {
    it(`fenced, ${kind.name}: -32042 with the URL on every try, then the authorised retry runs once`, async () => {
      const { server, state } = bankServer(kind.annotations);
      const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
      fenceMcpServer(server, {
        guard,
        ...(kind.policy === undefined ? {} : { policies: { link_account: kind.policy } }),
      });
      const client = await connect(server);
      for (let attempt = 1; attempt <= 2; attempt++) {
        const error = await client.callTool(linkCall).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(UrlElicitationRequiredError);
        expect((error as McpError).code).toBe(-32042);
        expect((error as UrlElicitationRequiredError).elicitations).toEqual([
          {
            mode: 'url',
            elicitationId: 'authorise-1',
            url: AUTHORISE_URL,
            message: 'Authorise toolfence-bank to link your account',
          },
        ]);
        expect(state.asked).toBe(attempt);
      }
      // Nothing was recorded: no record in any state.
      const page = await guard.list({ states: [...EVERY_STATE] });
      expect(page.records).toEqual([]);

      state.authorised = true; // the user opened the URL
      const linked = await client.callTool(linkCall);
      expect(linked.isError).toBeUndefined();
      expect(linked.content).toEqual([{ type: 'text', text: 'linked DE02 1203 0000 0000 2020 51 (#1)' }]);
      expect(state.linked).toBe(1);
      const again = await client.callTool(linkCall);
      if (kind.annotations?.readOnlyHint === true) {
        // READ_ONLY is not guarded: it runs again, as it did before fencing.
        expect(state.linked).toBe(2);
      } else {
        expect(again.content).toEqual(linked.content);
        expect(state.linked).toBe(1);
      }
    });
  }

  it('a fenced client in a guarded EFFECTFUL call: rejects with -32042 and releases its claim', async () => {
    const { server, state } = bankServer();
    fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }) });
    const client = fenceMcpClient(await connect(server));
    const policies = mcpToolPolicies(await client.listTools(), {
      policies: { link_account: { kind: Idempotency.EFFECTFUL } },
    });
    const clientGuard = new Guard({ store: new MemoryStore(), tenant: 'agent' });
    const args = { iban: 'DE02 1203 0000 0000 2020 51' };
    const step = () =>
      clientGuard.run(
        { tool: 'link_account', arguments: args, runId: 'conversation-1', policy: policies.link_account! },
        () => client.callTool({ name: 'link_account', arguments: args }),
      );
    const error = await step().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UrlElicitationRequiredError);
    expect(isClientActionError(error)).toBe(true);
    expect((await clientGuard.list({ states: [...EVERY_STATE] })).records).toEqual([]);
    state.authorised = true;
    const result = await step();
    expect(result.content).toEqual([{ type: 'text', text: 'linked DE02 1203 0000 0000 2020 51 (#1)' }]);
    expect(state.linked).toBe(1);
  });
});

/**
 * A slow refund that reports its own progress every `tickMs` for `ticks` ticks (as a
 * well-behaved long tool does), then answers. `runs` counts its executions.
 */
function slowServer(ticks: number, tickMs: number, annotations: { idempotentHint?: boolean } = {}) {
  const server = new McpServer({ name: 'slow', version: '1.0.0' });
  const state = { runs: 0 };
  server.registerTool(
    'slow_refund',
    { inputSchema: { orderId: z.string() }, annotations },
    async ({ orderId }, extra) => {
      state.runs += 1;
      const run = state.runs;
      const token = extra._meta?.progressToken;
      for (let tick = 1; tick <= ticks; tick++) {
        await new Promise((resolve) => setTimeout(resolve, tickMs));
        if (token !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: tick, total: ticks },
          });
        }
      }
      return { content: [{ type: 'text', text: `refunded ${orderId} (run ${run})` }] };
    },
  );
  return { server, state };
}

interface Heard {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** A call's answer: its result, or the error it was rejected with. */
interface Settled {
  readonly result?: { content?: unknown; _meta?: Record<string, unknown> };
  readonly error?: McpError;
}

/** Two calls with one key, the second while the first runs, each with its own progress handler. */
async function twoCalls(
  client: Client,
  options: { timeout: number; resetTimeoutOnProgress: boolean },
  startSecondAfterMs: number,
) {
  const call = { name: 'slow_refund', arguments: { orderId: 'A-7' }, _meta: { idempotencyKey: 'slow-1' } };
  const heard: [Heard[], Heard[]] = [[], []];
  const settle = (promise: Promise<unknown>): Promise<Settled> =>
    promise.then(
      (result) => ({ result: result as Settled['result'] }),
      (error: unknown) => ({ error: error as McpError }),
    );
  const first = settle(client.callTool(call, undefined, { ...options, onprogress: (p) => heard[0].push(p) }));
  await new Promise((resolve) => setTimeout(resolve, startSecondAfterMs));
  const secondStartedMs = performance.now();
  const second = settle(
    client.callTool(call, undefined, { ...options, onprogress: (p) => heard[1].push(p) }),
  ).then((answer) => ({ ...answer, tookMs: performance.now() - secondStartedMs }));
  return { first: await first, second: await second, heard };
}

const waitingKinds: ReadonlyArray<{ readonly name: string; readonly policy: IdempotencyPolicy }> = [
  { name: 'IDEMPOTENT', policy: { kind: Idempotency.IDEMPOTENT } },
  { name: 'EFFECTFUL', policy: { kind: Idempotency.EFFECTFUL } },
];

describe('a waiting duplicate hears progress while it waits', () => {
  const clientOptions = { timeout: 300, resetTimeoutOnProgress: true };

  it('plain server (the reference): both calls run and complete within a 300 ms timeout reset by progress', async () => {
    const { server, state } = slowServer(8, 100);
    const client = await connect(server);
    const { first, second } = await twoCalls(client, clientOptions, 150);
    expect(first.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    expect(second.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 2)' }]);
    expect(state.runs).toBe(2);
  });

  for (const kind of waitingKinds) {
    it(`${kind.name}: the waiter gets keep-alive progress on its own token and the first call's result`, async () => {
      const { server, state } = slowServer(8, 100);
      fenceMcpServer(server, {
        guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }),
        policies: { slow_refund: kind.policy },
        waitProgressMs: 100,
      });
      const client = await connect(server);
      const { first, second, heard } = await twoCalls(client, clientOptions, 150);
      expect(first.error).toBeUndefined();
      expect(second.error).toBeUndefined();
      expect(first.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
      expect(second.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
      expect(state.runs).toBe(1);
      // The first call heard the tool's own progress; the waiter heard keep-alives: 1, 2, 3, …
      expect(heard[0].map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(heard[1].length).toBeGreaterThanOrEqual(3);
      expect(heard[1].map((p) => p.progress)).toEqual(heard[1].map((_p, index) => index + 1));
      expect(new Set(heard[1].map((p) => p.message))).toEqual(
        new Set(['toolfence: waiting for the call that holds this idempotency key']),
      );
    });
  }

  it('with the defaults (a keep-alive every 1 s): a waiter whose client times out after 2 s without progress is served', async () => {
    const { server, state } = slowServer(10, 250);
    fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }) });
    const client = await connect(server);
    const { first, second, heard } = await twoCalls(
      client,
      { timeout: 2_000, resetTimeoutOnProgress: true },
      100,
    );
    expect(first.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    expect(second.error).toBeUndefined();
    expect(second.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    expect(state.runs).toBe(1);
    expect(heard[1].length).toBeGreaterThanOrEqual(2);
    expect(DEFAULT_WAIT_PROGRESS_MS).toBe(1_000);
  });
});

describe('the wait limit leaves a waiter time to be answered', () => {
  it('the default wait (50 s) is under the SDK client default request timeout (60 s)', () => {
    expect(DEFAULT_MCP_WAIT_TIMEOUT_MS).toBe(50_000);
    expect(DEFAULT_REQUEST_TIMEOUT_MSEC).toBe(60_000);
    expect(DEFAULT_REQUEST_TIMEOUT_MSEC - DEFAULT_MCP_WAIT_TIMEOUT_MS).toBe(10_000);
  });

  it('a waiter past the limit is answered "not run, retryable" before its client gives up; the retry replays', async () => {
    const { server, state } = slowServer(10, 100);
    fenceMcpServer(server, {
      guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }),
      // leaseMs 5 s: the guard's own wait would be 10 s, far past the client's 800 ms.
      policies: { slow_refund: { kind: Idempotency.EFFECTFUL, leaseMs: 5_000 } },
      waitTimeoutMs: 300,
    });
    const client = await connect(server);
    const { first, second } = await twoCalls(client, { timeout: 1_500, resetTimeoutOnProgress: true }, 100);
    const { second: late } = await twoCalls(client, { timeout: 800, resetTimeoutOnProgress: false }, 0);
    expect(first.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    // The waiter of the first pair: answered at the limit, not run, retryable.
    expect(second.error).toBeUndefined();
    expect(notRunOf(second.result as CallToolResult)).toEqual({
      code: 'OUTCOME_PENDING',
      retryable: true,
      tool: 'slow_refund',
    });
    expect(second.tookMs).toBeGreaterThanOrEqual(250);
    expect(second.tookMs).toBeLessThan(800);
    // After the first finished, the same key replays.
    expect(late.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    expect(state.runs).toBe(1);
  });

  it("a policy's own waitTimeoutMs is kept", async () => {
    const { server, state } = slowServer(6, 100);
    fenceMcpServer(server, {
      guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }),
      policies: { slow_refund: { kind: Idempotency.EFFECTFUL, waitTimeoutMs: 5_000 } },
      waitTimeoutMs: 100,
    });
    const client = await connect(server);
    const { second } = await twoCalls(client, { timeout: 2_000, resetTimeoutOnProgress: true }, 100);
    expect(second.result?.content).toEqual([{ type: 'text', text: 'refunded A-7 (run 1)' }]);
    expect(state.runs).toBe(1);
  });
});

/**
 * A booking tool that does everything a tool may do during a call: logs, reports progress, asks
 * the user (elicitation) and the client's model (sampling), and echoes its progress token.
 */
function bookingServer(counter: { runs: number }) {
  const server = new McpServer({ name: 'travel', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('book_flight', { inputSchema: { flight: z.string() } }, async ({ flight }, extra) => {
    counter.runs += 1;
    const token = extra._meta?.progressToken;
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level: 'info', data: `booking ${flight}` },
    });
    if (token !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1, total: 2 },
      });
    }
    const answer = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          message: 'Passenger name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        },
      },
      ElicitResultSchema,
    );
    const sampled = await extra.sendRequest(
      {
        method: 'sampling/createMessage',
        params: { messages: [{ role: 'user', content: { type: 'text', text: 'seat?' } }], maxTokens: 5 },
      },
      CreateMessageResultSchema,
    );
    const seat = sampled.content.type === 'text' ? sampled.content.text : '?';
    return {
      content: [
        {
          type: 'text',
          text: `booked ${flight} for ${String(answer.content?.name)}, seat ${seat}, token ${String(token)}`,
        },
      ],
    };
  });
  return server;
}

/** A client that answers elicitation with `name` and sampling with `seat`, and records what it heard. */
function userClient(name: string, seat: string) {
  const client = new Client(
    { name: `client-${name}`, version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  const heard = { logs: [] as string[], progress: 0, elicitations: 0, samplings: 0 };
  client.setRequestHandler(ElicitRequestSchema, async () => {
    heard.elicitations += 1;
    return { action: 'accept', content: { name } };
  });
  client.setRequestHandler(CreateMessageRequestSchema, async () => {
    heard.samplings += 1;
    return { role: 'assistant', model: 'scripted', content: { type: 'text', text: seat } };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    heard.logs.push(String(notification.params.data));
  });
  return { client, heard };
}

describe('a replay repeats the recorded result, runs nothing, and is marked', () => {
  it('no notification, sampling or elicitation on the replay; the content is the first request’s', async () => {
    const store = new MemoryStore();
    const counter = { runs: 0 };
    const guard = new Guard({ store, tenant: 'acme' });
    // Two server processes on one store, one user each.
    const ada = userClient('Ada', '12A');
    const bob = userClient('Bob', '30F');
    await connect(fenceMcpServer(bookingServer(counter), { guard }), ada.client);
    await connect(fenceMcpServer(bookingServer(counter), { guard }), bob.client);
    const call = {
      name: 'book_flight',
      arguments: { flight: 'LH 400' },
      _meta: { idempotencyKey: 'book-1' },
    };
    const onprogress = (heard: { progress: number }) => () => {
      heard.progress += 1;
    };

    const first = await ada.client.callTool(call, undefined, { onprogress: onprogress(ada.heard) });
    expect(first.content).toEqual([
      { type: 'text', text: `booked LH 400 for Ada, seat 12A, token ${firstToken(first)}` },
    ]);
    expect(isReplayed(first)).toBe(false);
    expect(first._meta?.[REPLAYED_META]).toBeUndefined();
    expect(ada.heard).toEqual({ logs: ['booking LH 400'], progress: 1, elicitations: 1, samplings: 1 });

    const replay = await bob.client.callTool(call, undefined, { onprogress: onprogress(bob.heard) });
    expect(counter.runs).toBe(1);
    // The recorded bytes, plus the marker.
    expect(replay.content).toEqual(first.content);
    expect(replay._meta).toEqual({ [REPLAYED_META]: true });
    expect(isReplayed(replay)).toBe(true);
    // Nothing ran for Bob: no log, no progress, nobody asked him or his model.
    expect(bob.heard).toEqual({ logs: [], progress: 0, elicitations: 0, samplings: 0 });
  });

  it('a waiter answered by the holder is marked too; the holder is not', async () => {
    const { server } = slowServer(4, 50);
    fenceMcpServer(server, { guard: new Guard({ store: new MemoryStore(), tenant: 'acme' }) });
    const client = await connect(server);
    const { first, second } = await twoCalls(client, { timeout: 5_000, resetTimeoutOnProgress: true }, 50);
    expect(first.result?._meta).toBeUndefined();
    expect(second.result?._meta).toEqual({ [REPLAYED_META]: true });
    expect(second.result?.content).toEqual(first.result?.content);
  });
});

/** The progress token the SDK client gave the first request (its message id), read back from the text. */
function firstToken(result: unknown): string {
  const text = (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';
  return text.slice(text.lastIndexOf(' ') + 1);
}
