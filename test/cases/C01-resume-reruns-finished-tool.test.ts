// Field case C01 (docs/field-cases.md, C01): the model asks for
// `create_ticket` (effectful) and `ask_human` (calls interrupt()) in one step. Resuming with
// Command({ resume }) runs the step again with the same tool call ids. Right outcome: one ticket;
// the second pass gets the recorded result (`tool.deduplicated`). Checked with createAgent
// (default and version 'v1', with toolfenceMiddleware and with fenceTools) and a hand-built
// StateGraph with ToolNode, on MemoryStore and on RedisStore (REDIS_URL).
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import {
  Command,
  END,
  interrupt,
  MemorySaver,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { Guard, type GuardEvent, Idempotency, type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { fenceTools, toolfenceMiddleware } from '@toolfence/langchain';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { createAgent, fakeModel } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectRedis, deletePrefix, keysUnder, randomPrefix } from '../support/redis.js';

const policies = { create_ticket: { kind: Idempotency.EFFECTFUL } } as const;

function scenario(options: { ticketDelayMs?: number } = {}) {
  const effects: string[] = [];
  const createTicket = tool(
    async ({ title }) => {
      if (options.ticketDelayMs !== undefined) await sleep(options.ticketDelayMs);
      effects.push(title);
      return `Ticket T-${effects.length} created: ${title}`;
    },
    { name: 'create_ticket', description: 'Open a support ticket.', schema: z.object({ title: z.string() }) },
  );
  const askHuman = tool(async ({ question }) => `The human answered: ${interrupt({ question })}`, {
    name: 'ask_human',
    description: 'Ask the human a question and wait for the answer.',
    schema: z.object({ question: z.string() }),
  });
  const model = fakeModel()
    .respondWithTools([
      { name: 'create_ticket', args: { title: 'Printer on fire' }, id: 'call_ticket' },
      { name: 'ask_human', args: { question: 'Which floor?' }, id: 'call_ask' },
    ])
    .respond(new AIMessage('Ticket opened; facilities are on their way to the 3rd floor.'));
  return { effects, createTicket, askHuman, model };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually(condition: () => boolean, what: string): Promise<void> {
  for (let waitedMs = 0; !condition(); waitedMs += 10) {
    if (waitedMs > 5000) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

type Scenario = ReturnType<typeof scenario>;
type App = { invoke(input: unknown, config: unknown): Promise<Record<string, unknown>> };

function handBuiltGraph(s: Scenario, tools: Parameters<typeof fenceTools>[0]): App {
  const bound = s.model.bindTools([s.createTicket, s.askHuman]);
  return new StateGraph(MessagesAnnotation)
    .addNode('agent', async (state) => ({ messages: [await bound.invoke(state.messages)] }))
    .addNode('tools', new ToolNode([...tools]))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', toolsCondition, ['tools', END])
    .addEdge('tools', 'agent')
    .compile({ checkpointer: new MemorySaver() }) as unknown as App;
}

/**
 * Run to the interrupt, resume, and return the tool messages of the resumed run.
 *
 * With a ToolNode that runs the step's calls together (createAgent 'v1', a hand-built graph),
 * invoke() returns at the interrupt while `create_ticket` may still be running: the node's
 * Promise.all rejected on the interrupt and left it behind. `firstPass` says when to resume:
 * `'finished'` once that call has finished (the field case; `finished` tells), `'running'` at once.
 */
async function interruptAndResume(
  app: App,
  s: Scenario,
  threadId: string,
  firstPass: 'finished' | 'running' = 'finished',
  finished: () => boolean = () => s.effects.length === 1,
): Promise<ToolMessage[]> {
  const config = { configurable: { thread_id: threadId } };
  const first = await app.invoke(
    { messages: [{ role: 'user', content: 'The printer is on fire.' }] },
    config,
  );
  const interrupts = first.__interrupt__ as { value: unknown }[] | undefined;
  expect(interrupts?.map((entry) => entry.value)).toEqual([{ question: 'Which floor?' }]);
  if (firstPass === 'finished') {
    await eventually(finished, 'the first pass to finish create_ticket');
  } else {
    expect(s.effects).toEqual([]);
  }

  const resumed = await app.invoke(new Command({ resume: '3rd floor' }), config);
  const messages = resumed.messages as unknown[];
  expect((messages.at(-1) as AIMessage).content).toBe(
    'Ticket opened; facilities are on their way to the 3rd floor.',
  );
  return messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

function expectRightOutcome(s: Scenario, toolMessages: ToolMessage[]): void {
  expect(s.effects).toEqual(['Printer on fire']);
  expect(toolMessages.map((m) => [m.tool_call_id, m.content, m.status])).toEqual([
    ['call_ticket', 'Ticket T-1 created: Printer on fire', 'success'],
    ['call_ask', 'The human answered: 3rd floor', 'success'],
  ]);
}

const ticketEvents = (events: GuardEvent[]) =>
  events.filter((e) => e.tool === 'create_ticket').map((e) => [e.type, e.callId, e.runId]);

describe('C01 without toolfence (the field bug this case is about)', () => {
  it("createAgent version 'v1' and a ToolNode graph create the ticket twice; the default agent once", async () => {
    const v1 = scenario();
    await interruptAndResume(
      createAgent({
        model: v1.model,
        tools: [v1.createTicket, v1.askHuman],
        checkpointer: new MemorySaver(),
        version: 'v1',
      }),
      v1,
      'plain-v1',
    );
    expect(v1.effects).toEqual(['Printer on fire', 'Printer on fire']);

    const graph = scenario();
    await interruptAndResume(
      handBuiltGraph(graph, [graph.createTicket, graph.askHuman]),
      graph,
      'plain-graph',
    );
    expect(graph.effects).toEqual(['Printer on fire', 'Printer on fire']);

    // The default (v2) runs each call as its own task and checkpoints the finished one.
    const v2 = scenario();
    const messages = await interruptAndResume(
      createAgent({
        model: v2.model,
        tools: [v2.createTicket, v2.askHuman],
        checkpointer: new MemorySaver(),
      }),
      v2,
      'plain-v2',
    );
    expectRightOutcome(v2, messages);
  });
});

const redisPrefix = randomPrefix('c01');
let redis: Redis | undefined;
const redisStores: RedisStore[] = [];

const stores: { name: string; make: () => Promise<IdempotencyStore> }[] = [
  { name: 'MemoryStore', make: async () => new MemoryStore() },
  {
    name: 'RedisStore',
    make: async () => {
      redis ??= await connectRedis();
      const store = new RedisStore({ client: redis, prefix: redisPrefix });
      redisStores.push(store);
      return store;
    },
  },
];

afterAll(async () => {
  for (const store of redisStores) await store.close();
  if (redis !== undefined) {
    await deletePrefix(redis, redisPrefix);
    expect(await keysUnder(redis, redisPrefix)).toEqual([]);
    redis.disconnect();
  }
});

for (const { name, make } of stores) {
  describe(`C01 on ${name}`, () => {
    let store: IdempotencyStore;
    let guard: Guard;
    let events: GuardEvent[];
    beforeAll(async () => {
      store = await make();
    });
    const recorded = () => events.some((e) => e.type === 'tool.completed' && e.callId === 'call_ticket');
    const fresh = (options?: { ticketDelayMs?: number }) => {
      const recorded: GuardEvent[] = [];
      events = recorded;
      guard = new Guard({ store, onEvent: (event) => recorded.push(event) });
      return scenario(options);
    };

    it("createAgent version 'v1' + toolfenceMiddleware: the resumed step replays the ticket", async () => {
      const s = fresh();
      const agent = createAgent({
        model: s.model,
        tools: [s.createTicket, s.askHuman],
        checkpointer: new MemorySaver(),
        version: 'v1',
        middleware: [toolfenceMiddleware({ guard, policies })],
      });
      expectRightOutcome(s, await interruptAndResume(agent, s, `${name}-mw-v1`, 'finished', recorded));
      expect(ticketEvents(events)).toEqual([
        ['tool.started', 'call_ticket', `${name}-mw-v1`],
        ['tool.completed', 'call_ticket', `${name}-mw-v1`],
        ['tool.deduplicated', 'call_ticket', `${name}-mw-v1`],
      ]);
    });

    it("createAgent version 'v1': resumed while the first pass still runs the ticket, the resume waits for its answer", async () => {
      const s = fresh({ ticketDelayMs: 100 });
      const agent = createAgent({
        model: s.model,
        tools: [s.createTicket, s.askHuman],
        checkpointer: new MemorySaver(),
        version: 'v1',
        middleware: [toolfenceMiddleware({ guard, policies })],
      });
      expectRightOutcome(s, await interruptAndResume(agent, s, `${name}-mw-v1-running`, 'running'));
      // The resumed call may join before or after the first pass announces its start (identical
      // calls in one process share one claim); either way: one run, the resume waits for it.
      const types = ticketEvents(events).map(([type]) => type);
      expect([...types].sort()).toEqual([
        'tool.completed',
        'tool.deduplicated',
        'tool.started',
        'tool.waiting',
      ]);
      expect(types.indexOf('tool.started')).toBeLessThan(types.indexOf('tool.completed'));
      expect(types.indexOf('tool.waiting')).toBeLessThan(types.indexOf('tool.deduplicated'));
      expect(types.indexOf('tool.completed')).toBeLessThan(types.indexOf('tool.deduplicated'));
    });

    it('createAgent (default) + toolfenceMiddleware: one ticket, the interrupting tool passes through', async () => {
      const s = fresh();
      const agent = createAgent({
        model: s.model,
        tools: [s.createTicket, s.askHuman],
        checkpointer: new MemorySaver(),
        middleware: [toolfenceMiddleware({ guard, policies })],
      });
      expectRightOutcome(s, await interruptAndResume(agent, s, `${name}-mw-v2`));
      // The default agent checkpoints each finished call, so LangGraph does not re-enter it.
      expect(ticketEvents(events)).toEqual([
        ['tool.started', 'call_ticket', `${name}-mw-v2`],
        ['tool.completed', 'call_ticket', `${name}-mw-v2`],
      ]);
    });

    it("createAgent version 'v1' with fenceTools", async () => {
      const s = fresh();
      const agent = createAgent({
        model: s.model,
        tools: fenceTools([s.createTicket, s.askHuman], { guard, policies }),
        checkpointer: new MemorySaver(),
        version: 'v1',
      });
      expectRightOutcome(s, await interruptAndResume(agent, s, `${name}-tools-v1`, 'finished', recorded));
      expect(ticketEvents(events).map(([type]) => type)).toEqual([
        'tool.started',
        'tool.completed',
        'tool.deduplicated',
      ]);
    });

    it('hand-built StateGraph with ToolNode and fenceTools', async () => {
      const s = fresh();
      const graph = handBuiltGraph(s, fenceTools([s.createTicket, s.askHuman], { guard, policies }));
      expectRightOutcome(s, await interruptAndResume(graph, s, `${name}-graph`, 'finished', recorded));
      expect(ticketEvents(events)).toEqual([
        ['tool.started', 'call_ticket', `${name}-graph`],
        ['tool.completed', 'call_ticket', `${name}-graph`],
        ['tool.deduplicated', 'call_ticket', `${name}-graph`],
      ]);
    });

    it('the interrupting tool can be fenced too: interrupt() releases its claim, the resumed call completes', async () => {
      const s = fresh();
      const both = { ...policies, ask_human: { kind: Idempotency.EFFECTFUL } };
      const graph = handBuiltGraph(s, fenceTools([s.createTicket, s.askHuman], { guard, policies: both }));
      expectRightOutcome(s, await interruptAndResume(graph, s, `${name}-graph-both`, 'finished', recorded));
      expect(events.filter((e) => e.tool === 'ask_human').map((e) => [e.type, e.callId])).toEqual([
        ['tool.started', 'call_ask'],
        ['tool.failed', 'call_ask'],
        ['tool.started', 'call_ask'],
        ['tool.completed', 'call_ask'],
      ]);
      expect(events.some((e) => e.type === 'tool.indeterminate')).toBe(false);
    });
  });
}
