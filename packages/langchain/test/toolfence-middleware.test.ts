import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import {
  Idempotency,
  type IdempotencyPolicy,
  IndeterminateOutcomeError,
  KeyDerivationError,
  PolicyError,
  ToolfenceError,
} from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent, createMiddleware, fakeModel, MiddlewareError } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingGuard, ticketTool, userMessage } from './support.js';

const effectful = { kind: Idempotency.EFFECTFUL } as const;
const thread = (id: string) => ({ configurable: { thread_id: id } });
const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

function toolMessages(messages: unknown[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

/** The parts of a ToolMessage the model and the graph read. */
function visible(message: ToolMessage | undefined) {
  return (
    message && {
      content: message.content,
      status: message.status,
      name: message.name,
      tool_call_id: message.tool_call_id,
    }
  );
}

function failingTool() {
  let runs = 0;
  const failing = tool(
    async () => {
      runs += 1;
      throw new Error('printer API said no');
    },
    { name: 'print', description: 'Print a page', schema: z.object({ page: z.number() }) },
  );
  return { failing, runs: () => runs };
}

function scriptedModel(args: Record<string, unknown>, name = 'print') {
  return fakeModel()
    .respondWithTools([{ name, args, id: 'call_1' }])
    .respond(new AIMessage('All done.'));
}

describe('toolfenceMiddleware keeps createAgent behaviour for ordinary tool errors', () => {
  for (const guarded of [false, true]) {
    it(`a tool error reaches the model as an error ToolMessage and the run goes on (${guarded ? 'tool with a policy' : 'tool without a policy'})`, async () => {
      const { guard } = recordingGuard();
      const policies: Record<string, IdempotencyPolicy> = guarded
        ? { print: { kind: Idempotency.IDEMPOTENT } }
        : {};

      const plain = failingTool();
      const withoutMiddleware = await createAgent({
        model: scriptedModel({ page: 1 }),
        tools: [plain.failing],
      }).invoke(userMessage, thread('a'));

      const fenced = failingTool();
      const withMiddleware = await createAgent({
        model: scriptedModel({ page: 1 }),
        tools: [fenced.failing],
        middleware: [toolfenceMiddleware({ guard, policies })],
      }).invoke(userMessage, thread('a'));

      const expected = visible(toolMessages(withoutMiddleware.messages)[0]);
      expect(expected).toEqual({
        content: 'Error: printer API said no\n Please fix your mistakes.',
        status: 'error',
        name: 'print',
        tool_call_id: 'call_1',
      });
      expect(visible(toolMessages(withMiddleware.messages)[0])).toEqual(expected);
      expect(withMiddleware.messages.at(-1)?.content).toBe('All done.');
      expect(withMiddleware.messages).toHaveLength(withoutMiddleware.messages.length);
      expect(fenced.runs()).toBe(1);
    });
  }

  it('a bad tool input gets the same message as without the middleware, and claims nothing', async () => {
    const { guard, events } = recordingGuard();
    const plain = failingTool();
    const withoutMiddleware = await createAgent({
      model: scriptedModel({ page: 'one' }),
      tools: [plain.failing],
    }).invoke(userMessage, thread('a'));
    const fenced = failingTool();
    const withMiddleware = await createAgent({
      model: scriptedModel({ page: 'one' }),
      tools: [fenced.failing],
      middleware: [toolfenceMiddleware({ guard, policies: { print: effectful } })],
    }).invoke(userMessage, thread('a'));

    const firstLine = (message: ToolMessage | undefined) => String(message?.content).split('\n')[0];
    const expected = toolMessages(withoutMiddleware.messages)[0];
    const actual = toolMessages(withMiddleware.messages)[0];
    expect(firstLine(expected)).toBe(
      `Error invoking tool 'print' with kwargs {"page":"one"} with error: Error: Received tool input did not match expected schema`,
    );
    expect(firstLine(actual)).toBe(firstLine(expected));
    expect(String(actual?.content)).toContain('expected number, received string');
    expect(actual?.status).toBe('error');
    expect(withMiddleware.messages.at(-1)?.content).toBe('All done.');
    expect(events).toEqual([]);
    expect(fenced.runs()).toBe(0);
  });

  it("an error thrown by another middleware keeps that middleware's behaviour (rejects)", async () => {
    const { guard } = recordingGuard();
    const strict = createMiddleware({
      name: 'strict',
      wrapToolCall: async () => {
        throw new Error('not allowed today');
      },
    });
    const { createTicket } = ticketTool();
    const agent = createAgent({
      model: scriptedModel({ title: 'Printer' }, 'create_ticket'),
      tools: [createTicket],
      middleware: [toolfenceMiddleware({ guard, policies: { create_ticket: effectful } }), strict],
    });
    const error = await agent.invoke(userMessage, thread('a')).catch((caught: unknown) => caught);
    expect(MiddlewareError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe('not allowed today');
  });
});

describe('toolfenceMiddleware guards the tools of an existing agent', () => {
  it('two identical calls in one step run the tool once; each gets its own ToolMessage', async () => {
    const { guard, types } = recordingGuard();
    const { createTicket, effects } = ticketTool({ delayMs: 30 });
    const model = fakeModel()
      .respondWithTools([
        { name: 'create_ticket', args: { title: 'Printer' }, id: 'call_a' },
        { name: 'create_ticket', args: { title: 'Printer' }, id: 'call_b' },
      ])
      .respond(new AIMessage('Opened.'));
    const agent = createAgent({
      model,
      tools: [createTicket],
      middleware: [toolfenceMiddleware({ guard, policies: { create_ticket: effectful } })],
    });
    const result = await agent.invoke(userMessage, thread('t1'));
    expect(effects).toEqual(['Printer']);
    expect(toolMessages(result.messages).map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_a', 'Ticket T-1 created: Printer'],
      ['call_b', 'Ticket T-1 created: Printer'],
    ]);
    expect(types('create_ticket').filter((type) => type === 'tool.started')).toHaveLength(1);
  });

  it('is the object createMiddleware would build', () => {
    const { guard } = recordingGuard();
    const ours = toolfenceMiddleware({ guard, policies: {} });
    const reference = createMiddleware({
      name: 'toolfence',
      beforeAgent: ours.beforeAgent as never,
      wrapToolCall: ours.wrapToolCall,
      wrapModelCall: ours.wrapModelCall,
    });
    const defined = (value: object) =>
      Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined));
    expect(defined(ours)).toEqual(defined(reference));
    expect((ours as unknown as Record<symbol, unknown>)[Symbol.for('AgentMiddleware')]).toBe(true);
  });
});

describe('toolfenceMiddleware: an indeterminate outcome stops the run', () => {
  it('rejects agent.invoke with the IndeterminateOutcomeError; the model is not called again; the tool never re-runs', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool({ fail: connectionReset });
    const model = scriptedModel({ title: 'Printer' }, 'create_ticket');
    const agent = createAgent({
      model,
      tools: [createTicket],
      checkpointer: new MemorySaver(),
      middleware: [toolfenceMiddleware({ guard, policies: { create_ticket: effectful } })],
    });

    const error = await agent.invoke(userMessage, thread('t1')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(IndeterminateOutcomeError);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    const indeterminate = error as IndeterminateOutcomeError;
    expect(indeterminate.tool).toBe('create_ticket');
    expect(indeterminate.reasonType).toBe('ECONNRESET');
    expect(model.callCount).toBe(1);
    expect(effects).toEqual(['Printer']);

    // Resuming the thread replays the step: still indeterminate, the tool is not entered.
    const again = await agent.invoke(null, thread('t1')).catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(again)).toBe(true);
    expect(effects).toEqual(['Printer']);
    expect(model.callCount).toBe(1);

    // An operator checks the ticket system and settles the record; the thread then resumes
    // with the settled outcome, still without running the tool.
    await guard.resolve(indeterminate.key, { outcome: 'Ticket T-1 created: Printer (verified)' });
    const resumed = await agent.invoke(null, thread('t1'));
    expect(toolMessages(resumed.messages).map((m) => [m.tool_call_id, m.content, m.status])).toEqual([
      ['call_1', 'Ticket T-1 created: Printer (verified)', 'success'],
    ]);
    expect(resumed.messages.at(-1)?.content).toBe('All done.');
    expect(effects).toEqual(['Printer']);
  });

  it("onIndeterminate: 'report' turns it into an error ToolMessage and the run goes on", async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool({ fail: connectionReset });
    const model = scriptedModel({ title: 'Printer' }, 'create_ticket');
    const agent = createAgent({
      model,
      tools: [createTicket],
      middleware: [
        toolfenceMiddleware({ guard, policies: { create_ticket: effectful }, onIndeterminate: 'report' }),
      ],
    });
    const result = await agent.invoke(userMessage, thread('t1'));
    const [message] = toolMessages(result.messages);
    expect(message?.status).toBe('error');
    expect(message?.tool_call_id).toBe('call_1');
    expect(message?.content).toMatch(/^Tool "create_ticket" did not finish cleanly: its outcome is unknown/);
    expect(message?.content).toContain('The action may have happened.');
    expect(message?.content).toContain('Do NOT call this tool again');
    expect(result.messages.at(-1)?.content).toBe('All done.');
    // The model saw the report on its second call.
    expect(toolMessages(model.calls[1]?.messages ?? [])[0]?.content).toBe(message?.content);
    expect(effects).toEqual(['Printer']);
  });
});

describe('toolfenceMiddleware: configuration errors reject', () => {
  it('no thread_id and no runId: KeyDerivationError naming thread_id, tool not run', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const agent = createAgent({
      model: scriptedModel({ title: 'Printer' }, 'create_ticket'),
      tools: [createTicket],
      middleware: [toolfenceMiddleware({ guard, policies: { create_ticket: effectful } })],
    });
    const error = await agent.invoke(userMessage).catch((caught: unknown) => caught);
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('thread_id');
    expect(effects).toEqual([]);
  });

  it('runId from the options works without a thread', async () => {
    const { guard, events } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const agent = createAgent({
      model: scriptedModel({ title: 'Printer' }, 'create_ticket'),
      tools: [createTicket],
      middleware: [
        toolfenceMiddleware({
          guard,
          policies: { create_ticket: effectful },
          runId: (config) => config.configurable?.conversation_id,
          tenant: 'acme',
        }),
      ],
    });
    await agent.invoke(userMessage, { configurable: { conversation_id: 'conv-7' } });
    expect(effects).toEqual(['Printer']);
    expect(events[0]).toMatchObject({
      type: 'tool.started',
      runId: 'conv-7',
      tenant: 'acme',
      callId: 'call_1',
    });
  });

  it('an invalid policy fails when the middleware is made', () => {
    const { guard } = recordingGuard();
    expect(() =>
      toolfenceMiddleware({ guard, policies: { create_ticket: { kind: 'sometimes' as never } } }),
    ).toThrow(PolicyError);
  });

  it('a key argument that is not a parameter fails at the first model call, before any tool runs', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const model = scriptedModel({ title: 'Printer' }, 'create_ticket');
    const agent = createAgent({
      model,
      tools: [createTicket],
      middleware: [
        toolfenceMiddleware({
          guard,
          policies: { create_ticket: { kind: Idempotency.EFFECTFUL, keyArguments: ['ticketId'] } },
        }),
      ],
    });
    const error = await agent.invoke(userMessage, thread('t1')).catch((caught: unknown) => caught);
    // langchain wraps errors thrown by a middleware's own hooks; name, message and cause are ours.
    expect((error as Error).name).toBe('PolicyError');
    expect((error as Error).message).toContain('"ticketId", which is not a parameter of the tool');
    expect(PolicyError.isInstance((error as Error).cause)).toBe(true);
    expect(ToolfenceError.isInstance((error as Error).cause)).toBe(true);
    expect(model.callCount).toBe(0);
    expect(effects).toEqual([]);
  });

  it('a policy whose name matches no tool (a typo) fails at the first model call, before any tool runs', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const model = scriptedModel({ title: 'Printer' }, 'create_ticket');
    const agent = createAgent({
      model,
      tools: [createTicket],
      middleware: [toolfenceMiddleware({ guard, policies: { create_tikcet: effectful } })],
    });
    const error = await agent.invoke(userMessage, thread('t1')).catch((caught: unknown) => caught);
    expect((error as Error).name).toBe('PolicyError');
    expect((error as Error).message).toContain(
      '"create_tikcet", which the agent does not have (tools: create_ticket)',
    );
    expect(model.callCount).toBe(0);
    expect(effects).toEqual([]);
  });

  it('allowUnknownPolicies lets a policy name a tool the first model call does not see', async () => {
    const { guard } = recordingGuard();
    const { createTicket, effects } = ticketTool();
    const agent = createAgent({
      model: scriptedModel({ title: 'Printer' }, 'create_ticket'),
      tools: [createTicket],
      middleware: [
        toolfenceMiddleware({
          guard,
          policies: { create_ticket: effectful, search_later: effectful },
          allowUnknownPolicies: true,
        }),
      ],
    });
    await agent.invoke(userMessage, thread('t2'));
    expect(effects).toEqual(['Printer']);
  });
});
