import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { isStructuredTool, StructuredTool, ToolInputParsingException, tool } from '@langchain/core/tools';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import { ToolNode } from '@langchain/langgraph/prebuilt';
import {
  currentToolCall,
  Idempotency,
  IndeterminateOutcomeError,
  KeyDerivationError,
  PolicyError,
  ToolTimeoutError,
} from '@toolfence/core';
import { fenceTool, fenceTools, isFencedTool } from '@toolfence/langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingGuard, ticketTool } from './support.js';

const effectful = { kind: Idempotency.EFFECTFUL } as const;
const thread = (id: string) => ({ configurable: { thread_id: id } });

function searchTool() {
  let runs = 0;
  const search = tool(
    async ({ query }) => {
      runs += 1;
      return [`Found 2 documents for ${query}`, { documents: [{ id: 'd1' }, { id: 'd2' }], run: runs }];
    },
    {
      name: 'search_docs',
      description: 'Search the documentation.',
      schema: z.object({ query: z.string() }),
      responseFormat: 'content_and_artifact',
      returnDirect: true,
      metadata: { team: 'docs' },
      tags: ['search'],
      verbose: false,
      extras: { providerToolType: 'custom' },
    },
  );
  return { search, runs: () => runs };
}

describe('fenceTool: an agent cannot tell the wrapper from the tool', () => {
  it('copies everything an agent reads', () => {
    const { guard } = recordingGuard();
    const { search } = searchTool();
    const fenced = fenceTool(search, { guard, policy: { kind: Idempotency.IDEMPOTENT } });

    expect(fenced).toBeInstanceOf(StructuredTool);
    expect(isFencedTool(fenced)).toBe(true);
    expect(isStructuredTool(fenced)).toBe(true);
    expect(fenced.name).toBe('search_docs');
    expect(fenced.description).toBe('Search the documentation.');
    expect(fenced.schema).toBe(search.schema);
    expect(fenced.returnDirect).toBe(true);
    expect(fenced.responseFormat).toBe('content_and_artifact');
    expect(fenced.metadata).toEqual({ team: 'docs' });
    expect(fenced.tags).toEqual(['search']);
    expect(fenced.extras).toEqual({ providerToolType: 'custom' });
    expect(fenced.wrappedTool).toBe(search);
    // What bindTools sends to a provider.
    expect(convertToOpenAITool(fenced)).toEqual(convertToOpenAITool(search));
  });

  it('returns the tool message of the tool on a first run, and rebuilds it (artifact too) for a repeat', async () => {
    const { guard, types } = recordingGuard();
    const reference = searchTool();
    const { search, runs } = searchTool();
    const fenced = fenceTool(search, { guard, policy: { kind: Idempotency.IDEMPOTENT } });
    const call = { type: 'tool_call' as const, id: 'call_1', name: 'search_docs', args: { query: 'lease' } };

    const expected = await reference.search.invoke(call, thread('t1'));
    const first = await fenced.invoke(call, thread('t1'));
    expect(ToolMessage.isInstance(first)).toBe(true);
    expect(first).toMatchObject({
      content: expected.content,
      artifact: expected.artifact,
      tool_call_id: 'call_1',
      name: 'search_docs',
      status: 'success',
    });

    const repeat = await fenced.invoke({ ...call, id: 'call_2' }, thread('t1'));
    expect(runs()).toBe(1);
    expect(ToolMessage.isInstance(repeat)).toBe(true);
    expect(repeat).toMatchObject({
      content: 'Found 2 documents for lease',
      artifact: { documents: [{ id: 'd1' }, { id: 'd2' }], run: 1 },
      tool_call_id: 'call_2',
      name: 'search_docs',
      status: 'success',
      metadata: { team: 'docs' },
    });
    expect(types()).toEqual(['tool.started', 'tool.completed', 'tool.deduplicated']);
  });

  it('invoked with plain arguments returns the content, first run and repeat alike', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: effectful, runId: 'run-1' });

    expect(await fenced.invoke({ title: 'Printer' })).toBe('Ticket T-1 created: Printer');
    expect(await fenced.invoke({ title: 'Printer', priority: 3 })).toBe('Ticket T-1 created: Printer');
    expect(effects).toEqual(['Printer']);
  });

  it('takes the call id from config.toolCall when invoked with plain arguments', async () => {
    const { guard, events } = recordingGuard();
    const { createTicket } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: { kind: Idempotency.EFFECTFUL, key: 'call' } });
    const toolCall = { id: 'call_9', name: 'create_ticket', args: { title: 'Printer' } };

    const answer = await fenced.invoke({ title: 'Printer' }, { ...thread('t1'), toolCall });
    expect(ToolMessage.isInstance(answer)).toBe(true);
    expect((answer as ToolMessage).tool_call_id).toBe('call_9');
    expect(events[0]?.callId).toBe('call_9');
  });
});

describe('fenceTool: arguments are validated before the guard', () => {
  it('a schema error throws what the tool throws and claims nothing', async () => {
    const { guard, events } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: effectful });
    const bad = { type: 'tool_call' as const, id: 'call_1', name: 'create_ticket', args: { title: 42 } };

    const original = await createTicket.invoke(bad as never, thread('t1')).catch((error: unknown) => error);
    const wrapped = await fenced.invoke(bad as never, thread('t1')).catch((error: unknown) => error);
    expect(wrapped).toBeInstanceOf(ToolInputParsingException);
    expect((wrapped as Error).message).toBe((original as Error).message);
    expect((wrapped as Error).message).toContain('expected string, received number');
    expect(events).toEqual([]);
    expect(effects).toEqual([]);

    // Nothing was claimed: the corrected call runs (it would be indeterminate otherwise).
    const fixed = await fenced.invoke({ ...bad, args: { title: 'Printer' } }, thread('t1'));
    expect((fixed as ToolMessage).content).toBe('Ticket T-1 created: Printer');
  });

  it('validates JSON-schema tools the same way', async () => {
    const { guard, events } = recordingGuard();
    let runs = 0;
    const jsonTool = tool(
      async (input: { sku: string }) => {
        runs += 1;
        return `ordered ${input.sku}`;
      },
      {
        name: 'order',
        description: 'Order an item',
        schema: {
          type: 'object',
          properties: { sku: { type: 'string' } },
          required: ['sku'],
        },
      },
    );
    // tool() with a JSON schema is typed as a union (DynamicTool | DynamicStructuredTool) whose
    // invoke is not callable; the fenced tool has exactly that type, so narrow it as for the tool.
    const fenced = fenceTool(jsonTool as StructuredTool, {
      guard,
      policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['sku'] },
    });
    await expect(fenced.invoke({ sku: 7 } as never, thread('t1'))).rejects.toBeInstanceOf(
      ToolInputParsingException,
    );
    expect(events).toEqual([]);
    expect(await fenced.invoke({ sku: 'A-1' }, thread('t1'))).toBe('ordered A-1');
    expect(await fenced.invoke({ sku: 'A-1' }, thread('t1'))).toBe('ordered A-1');
    expect(runs).toBe(1);
  });

  it('keys on the parsed arguments: a default filled in by the schema is the same call', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: effectful });
    await fenced.invoke(
      { type: 'tool_call', id: 'a', name: 'create_ticket', args: { title: 'X' } },
      thread('t'),
    );
    await fenced.invoke(
      { type: 'tool_call', id: 'b', name: 'create_ticket', args: { title: 'X', priority: 3 } },
      thread('t'),
    );
    expect(effects).toEqual(['X']);
  });
});

describe('fenceTool: policies are checked when the tool is wrapped', () => {
  it('refuses a key argument that is not a parameter (zod schema)', () => {
    const { guard } = recordingGuard();
    const { createTicket } = ticketTool();
    const wrap = () =>
      // @ts-expect-error a key argument the schema lacks is a compile error as well
      fenceTool(createTicket, { guard, policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['ticketId'] } });
    expect(wrap).toThrow(PolicyError);
    expect(wrap).toThrow(/"ticketId", which is not a parameter of the tool \(parameters: title, priority\)/);
  });

  it('refuses a key argument that is not a parameter (JSON schema)', () => {
    const { guard } = recordingGuard();
    const jsonTool = tool(async () => 'ok', {
      name: 'order',
      description: 'Order an item',
      schema: { type: 'object', properties: { sku: { type: 'string' } } },
    });
    expect(() =>
      fenceTool(jsonTool, { guard, policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['SKU'] } }),
    ).toThrow(PolicyError);
    expect(
      fenceTool(jsonTool, { guard, policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['sku'] } }).name,
    ).toBe('order');
  });

  it('refuses an invalid policy', () => {
    const { guard } = recordingGuard();
    const { createTicket } = ticketTool();
    expect(() =>
      fenceTool(createTicket, {
        guard,
        policy: { kind: Idempotency.EFFECTFUL, leaseMs: 100, heartbeatMs: 100 },
      }),
    ).toThrow(PolicyError);
    expect(() =>
      fenceTool(createTicket, {
        guard,
        policy: { kind: Idempotency.EFFECTFUL, isNoEffectError: 'no' as never },
      }),
    ).toThrow(PolicyError);
  });
});

describe('fenceTool: tenant and run id', () => {
  it('keys per thread: another thread_id is another call, the same one is a repeat', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: effectful });
    const call = {
      type: 'tool_call' as const,
      id: 'call_1',
      name: 'create_ticket',
      args: { title: 'Printer' },
    };

    await fenced.invoke(call, thread('thread-a'));
    await fenced.invoke(call, thread('thread-a'));
    expect(effects).toHaveLength(1);
    await fenced.invoke(call, thread('thread-b'));
    expect(effects).toHaveLength(2);
  });

  it('takes runId and tenant from options, as strings or resolvers of the config', async () => {
    const { guard, events } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, {
      guard,
      policy: effectful,
      tenant: (config) => config.configurable?.customer,
      runId: (config) => `conversation:${config.configurable?.conversation}`,
    });
    await fenced.invoke({ title: 'A' }, { configurable: { customer: 'acme', conversation: 7 } });
    await fenced.invoke({ title: 'A' }, { configurable: { customer: 'globex', conversation: 7 } });
    expect(effects).toHaveLength(2);
    expect(events.filter((e) => e.type === 'tool.started').map((e) => [e.tenant, e.runId])).toEqual([
      ['acme', 'conversation:7'],
      ['globex', 'conversation:7'],
    ]);

    const fixed = fenceTool(ticketTool().createTicket, { guard, policy: effectful, runId: 'batch-1' });
    expect(await fixed.invoke({ title: 'B' })).toBe('Ticket T-1 created: B');
  });

  it('without a run id a run-scoped call fails closed with a KeyDerivationError that says how to fix it', async () => {
    const { guard, events } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const fenced = fenceTool(createTicket, { guard, policy: effectful });

    const error = await fenced.invoke({ title: 'Printer' }).catch((caught: unknown) => caught);
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('configurable: { thread_id }');
    expect((error as Error).message).toContain('runId');
    expect(effects).toEqual([]);
    expect(events).toEqual([]);

    // A tenant-scoped policy needs no run id.
    const tenantScoped = fenceTool(createTicket, {
      guard,
      policy: { kind: Idempotency.EFFECTFUL, scope: 'tenant' },
    });
    expect(await tenantScoped.invoke({ title: 'Printer' })).toBe('Ticket T-1 created: Printer');
  });
});

describe('fenceTool: two calls in one step (LangGraph ToolNode runs them concurrently)', () => {
  const twoIdenticalCalls = new AIMessage({
    content: '',
    tool_calls: [
      { id: 'call_a', name: 'create_ticket', args: { title: 'Printer' }, type: 'tool_call' },
      { id: 'call_b', name: 'create_ticket', args: { title: 'Printer' }, type: 'tool_call' },
    ],
  });

  it('collapse to one execution under the arguments key; each call gets its own answer', async () => {
    const { guard, types } = recordingGuard();
    const { createTicket, effects } = ticketTool({ delayMs: 30 });
    const node = new ToolNode([fenceTool(createTicket, { guard, policy: effectful })]);

    const { messages } = (await node.invoke({ messages: [twoIdenticalCalls] }, thread('t1'))) as {
      messages: ToolMessage[];
    };
    expect(effects).toEqual(['Printer']);
    expect(messages.map((m) => [m.tool_call_id, m.content, m.status])).toEqual([
      ['call_a', 'Ticket T-1 created: Printer', 'success'],
      ['call_b', 'Ticket T-1 created: Printer', 'success'],
    ]);
    expect(types()).toContain('tool.waiting');
    expect(types()).toContain('tool.deduplicated');
  });

  it("both run under the 'call' key", async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool({ delayMs: 30 });
    const node = new ToolNode([
      fenceTool(createTicket, { guard, policy: { kind: Idempotency.EFFECTFUL, key: 'call' } }),
    ]);

    const { messages } = (await node.invoke({ messages: [twoIdenticalCalls] }, thread('t1'))) as {
      messages: ToolMessage[];
    };
    expect(effects).toEqual(['Printer', 'Printer']);
    expect(messages.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_a', expect.stringMatching(/^Ticket T-[12] created: Printer$/)],
      ['call_b', expect.stringMatching(/^Ticket T-[12] created: Printer$/)],
    ]);
    expect(new Set(messages.map((m) => m.content)).size).toBe(2);
  });
});

describe('fenceTool: indeterminate outcomes', () => {
  const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

  it('ECONNRESET after the effect: IndeterminateOutcomeError, and the body is never run again', async () => {
    const { guard, types } = recordingGuard();
    const { createTicket, effects } = ticketTool({ fail: connectionReset });
    const fenced = fenceTool(createTicket, { guard, policy: effectful });
    const call = {
      type: 'tool_call' as const,
      id: 'call_1',
      name: 'create_ticket',
      args: { title: 'Printer' },
    };

    const first = await fenced.invoke(call, thread('t1')).catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(first)).toBe(true);
    expect((first as IndeterminateOutcomeError).reasonType).toBe('ECONNRESET');
    const again = await fenced
      .invoke({ ...call, id: 'call_2' }, thread('t1'))
      .catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(again)).toBe(true);
    expect(effects).toEqual(['Printer']);
    expect(types()).toEqual(['tool.started', 'tool.indeterminate', 'tool.indeterminate']);
  });

  it("onIndeterminate: 'report' answers with an error ToolMessage the model can read", async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool({ fail: connectionReset });
    const fenced = fenceTool(createTicket, { guard, policy: effectful, onIndeterminate: 'report' });

    const answer = await fenced.invoke(
      { type: 'tool_call', id: 'call_1', name: 'create_ticket', args: { title: 'Printer' } },
      thread('t1'),
    );
    expect(ToolMessage.isInstance(answer)).toBe(true);
    const message = answer as ToolMessage;
    expect(message.status).toBe('error');
    expect(message.tool_call_id).toBe('call_1');
    expect(message.name).toBe('create_ticket');
    expect(message.content).toContain('Tool "create_ticket"');
    expect(message.content).toContain('may have happened');
    expect(message.content).toContain('Do NOT call this tool again');
    expect(effects).toEqual(['Printer']);
  });

  it('an error the policy declares no-effect releases the claim: the call may run again', async () => {
    const { guard } = recordingGuard();
    let refuse = true;
    const { createTicket, effects } = ticketTool({
      fail: () => (refuse ? Object.assign(new Error('quota'), { status: 429 }) : undefined),
    });
    const fenced = fenceTool(createTicket, {
      guard,
      policy: {
        kind: Idempotency.EFFECTFUL,
        isNoEffectError: (error) => (error as { status?: number }).status === 429,
      },
    });
    await expect(fenced.invoke({ title: 'P' }, thread('t1'))).rejects.toThrow('quota');
    refuse = false;
    expect(await fenced.invoke({ title: 'P' }, thread('t1'))).toBe('Ticket T-2 created: P');
    expect(effects).toEqual(['P', 'P']);
  });
});

describe('fenceTool: the body runs under the guard context', () => {
  it("config.signal is the guard's context signal (cancelled at the policy timeout)", async () => {
    const { guard } = recordingGuard();
    let sameSignal = false;
    let abortReason: unknown;
    const slow = tool(
      async (_input, config) => {
        sameSignal = config.signal === currentToolCall()?.signal;
        await new Promise<void>((resolve) => {
          config.signal?.addEventListener('abort', () => {
            abortReason = config.signal?.reason;
            resolve();
          });
        });
        return 'late';
      },
      { name: 'slow', description: 'slow', schema: z.object({ n: z.number() }) },
    );
    const fenced = fenceTool(slow, { guard, policy: { kind: Idempotency.IDEMPOTENT, timeoutMs: 50 } });
    await expect(fenced.invoke({ n: 1 }, thread('t1'))).rejects.toBeInstanceOf(ToolTimeoutError);
    expect(sameSignal).toBe(true);
    expect(abortReason).toBeInstanceOf(ToolTimeoutError);
  });

  it("the caller's signal reaches the body", async () => {
    const { guard } = recordingGuard();
    const controller = new AbortController();
    let aborted = false;
    const waits = tool(
      async (_input, config) => {
        setTimeout(() => controller.abort(new Error('caller gave up')), 10);
        await new Promise((resolve) => config.signal?.addEventListener('abort', resolve));
        aborted = config.signal?.aborted === true;
        return 'done';
      },
      { name: 'waits', description: 'waits', schema: z.object({ n: z.number() }) },
    );
    const fenced = fenceTool(waits, { guard, policy: { kind: Idempotency.IDEMPOTENT } });
    await expect(fenced.invoke({ n: 1 }, { ...thread('t1'), signal: controller.signal })).rejects.toThrow();
    expect(aborted).toBe(true);
  });
});

describe('fenceTools', () => {
  it('wraps the tools that have a policy and passes the others through unchanged', () => {
    const { guard } = recordingGuard();
    const { createTicket } = ticketTool();
    const { search } = searchTool();
    const [ticket, docs] = fenceTools([createTicket, search], {
      guard,
      policies: { create_ticket: effectful },
    });
    expect(isFencedTool(ticket)).toBe(true);
    expect(isFencedTool(ticket) && ticket.wrappedTool).toBe(createTicket);
    expect(docs).toBe(search);
  });

  it('refuses a policy for a tool that is not in the list', () => {
    const { guard } = recordingGuard();
    const { createTicket } = ticketTool();
    // @ts-expect-error a misspelt tool name is a compile error as well
    expect(() => fenceTools([createTicket], { guard, policies: { create_tiket: effectful } })).toThrow(
      /policies name "create_tiket", which is not one of the tools \(create_ticket\)/,
    );
  });
});

describe('fenceTool in a LangGraph ToolNode: what an indeterminate outcome does', () => {
  const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  const ticketCall = new AIMessage({
    content: '',
    tool_calls: [{ id: 'call_1', name: 'create_ticket', args: { title: 'Printer' }, type: 'tool_call' }],
  });

  it('handleToolErrors: false makes the typed error stop the node', async () => {
    const { guard } = recordingGuard();
    const { createTicket } = ticketTool({ fail: connectionReset });
    const node = new ToolNode([fenceTool(createTicket, { guard, policy: effectful })], {
      handleToolErrors: false,
    });
    const error = await node
      .invoke({ messages: [ticketCall] }, thread('t1'))
      .catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
  });

  it("by default ToolNode shows the error to the model; 'report' gives it a message that says not to retry", async () => {
    const { guard } = recordingGuard();
    const thrown = new ToolNode([
      fenceTool(ticketTool({ fail: connectionReset }).createTicket, { guard, policy: effectful }),
    ]);
    const { messages: caught } = (await thrown.invoke({ messages: [ticketCall] }, thread('t1'))) as {
      messages: ToolMessage[];
    };
    expect(caught[0]?.status).toBe('error');
    expect(caught[0]?.content).toMatch(
      /^Error: The outcome of tool "create_ticket" is unknown \(ECONNRESET: socket hang up\)/,
    );

    const reported = new ToolNode([
      fenceTool(ticketTool({ fail: connectionReset }).createTicket, {
        guard,
        policy: effectful,
        onIndeterminate: 'report',
      }),
    ]);
    const { messages } = (await reported.invoke({ messages: [ticketCall] }, thread('t2'))) as {
      messages: ToolMessage[];
    };
    expect(messages[0]?.status).toBe('error');
    expect(messages[0]?.content).toMatch(
      /^Tool "create_ticket" did not finish cleanly: its outcome is unknown \(ECONNRESET\)/,
    );
    expect(messages[0]?.content).not.toContain('Please fix your mistakes');
  });
});

describe('fenceTool: a tool that answers with its own error message', () => {
  it('replays it with status error for the current call id', async () => {
    const { guard } = recordingGuard();
    let runs = 0;
    const charge = tool(
      async (_input, config) => {
        runs += 1;
        return new ToolMessage({
          status: 'error',
          content: 'card declined',
          tool_call_id: config.toolCall?.id ?? '',
        });
      },
      { name: 'charge_card', description: 'Charge a card.', schema: z.object({ orderId: z.string() }) },
    );
    const fenced = fenceTool(charge, { guard, policy: effectful });
    const call = (id: string) => ({
      type: 'tool_call' as const,
      id,
      name: 'charge_card',
      args: { orderId: 'A-1' },
    });
    const first = (await fenced.invoke(call('c1'), thread('t'))) as ToolMessage;
    const second = (await fenced.invoke(call('c2'), thread('t'))) as ToolMessage;
    expect(runs).toBe(1);
    expect([first.status, first.content, first.tool_call_id]).toEqual(['error', 'card declined', 'c1']);
    expect([second.status, second.content, second.tool_call_id]).toEqual(['error', 'card declined', 'c2']);
  });
});
