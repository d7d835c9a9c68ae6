// Issue 16: the adapter as a createAgent developer meets it. A run without a run id, the stops of
// parallel calls, a tool guarded twice, and approval flows (humanInTheLoopMiddleware).
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import {
  ExecutionAbandonedError,
  Idempotency,
  IndeterminateOutcomeError,
  KeyDerivationError,
  StepStoppedError,
} from '@toolfence/core';
import { fenceTool, fenceTools, stopErrorOf, toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent, fakeModel, humanInTheLoopMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingGuard, userMessage } from './support.js';

const effectful = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;
const thread = (id: string) => ({ configurable: { thread_id: id } });
const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

/** A refund tool whose body records every refund it pays (the effect). */
function refundTool(options: { fail?: boolean; delayMs?: number } = {}) {
  const refunds: Array<{ orderId: string; cents: number }> = [];
  const refundOrder = tool(
    async ({ orderId, cents }) => {
      if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      refunds.push({ orderId, cents });
      if (options.fail === true) throw connectionReset();
      return `Refunded ${cents} on ${orderId}`;
    },
    {
      name: 'refund_order',
      description: 'Refund an order.',
      schema: z.object({ orderId: z.string(), cents: z.number().int() }),
    },
  );
  return { refundOrder, refunds };
}

function toolMessages(messages: unknown[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

const twoRefunds = (a = 'A-1', b = 'B-2') =>
  fakeModel()
    .respondWithTools([
      { name: 'refund_order', args: { orderId: a, cents: 500 }, id: 'call_a' },
      { name: 'refund_order', args: { orderId: b, cents: 700 }, id: 'call_b' },
    ])
    .respond(new AIMessage('Refunded.'));

describe('toolfenceMiddleware: a run without a run id', () => {
  for (const calls of [1, 2]) {
    it(`rejects with KeyDerivationError before the first model call (${calls} call(s) in the step)`, async () => {
      const { guard, events } = recordingGuard();
      const { refundOrder, refunds } = refundTool();
      const model =
        calls === 2
          ? twoRefunds()
          : fakeModel()
              .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 5 }, id: 'call_a' }])
              .respond(new AIMessage('Refunded.'));
      const agent = createAgent({
        model,
        tools: [refundOrder],
        middleware: [toolfenceMiddleware({ guard, policies: { refund_order: effectful } })],
      });
      const error = await agent.invoke(userMessage).catch((caught: unknown) => caught);
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect(error).not.toBeInstanceOf(AggregateError);
      expect((error as Error).message).toContain(
        'Cannot derive the idempotency key of tool "refund_order": no run id',
      );
      expect((error as Error).message).toContain('{ configurable: { thread_id } }');
      expect((error as Error).message).toContain('runId');
      expect(model.callCount).toBe(0);
      expect(refunds).toEqual([]);
      expect(events).toEqual([]);
    });
  }

  it('a tenant-scoped policy needs no run id; a string runId option is one', async () => {
    const { guard } = recordingGuard();
    const { refundOrder, refunds } = refundTool();
    await createAgent({
      model: twoRefunds(),
      tools: [refundOrder],
      middleware: [
        toolfenceMiddleware({ guard, policies: { refund_order: { ...effectful, scope: 'tenant' } } }),
      ],
    }).invoke(userMessage);
    await createAgent({
      model: twoRefunds('C-3', 'D-4'),
      tools: [refundOrder],
      middleware: [toolfenceMiddleware({ guard, policies: { refund_order: effectful }, runId: 'job-9' })],
    }).invoke(userMessage);
    expect(refunds.map((refund) => refund.orderId)).toEqual(['A-1', 'B-2', 'C-3', 'D-4']);
  });
});

describe('toolfenceMiddleware: the stops of parallel calls', () => {
  it('two refunds of one step both indeterminate: one StepStoppedError lists both (keys, tools, call ids)', async () => {
    const { guard, events } = recordingGuard();
    const { refundOrder, refunds } = refundTool({ fail: true });
    const model = twoRefunds();
    const agent = createAgent({
      model,
      tools: [refundOrder],
      checkpointer: new MemorySaver(),
      middleware: [toolfenceMiddleware({ guard, policies: { refund_order: effectful } })],
    });
    const error = await agent.invoke(userMessage, thread('t1')).catch((caught: unknown) => caught);
    expect(StepStoppedError.isInstance(error)).toBe(true);
    const step = error as StepStoppedError;
    const indeterminateKeys = events.filter((e) => e.type === 'tool.indeterminate').map((e) => e.key);
    expect(indeterminateKeys).toHaveLength(2);
    expect(step.stops.map((stop) => [stop.tool, stop.callId])).toEqual([
      ['refund_order', 'call_a'],
      ['refund_order', 'call_b'],
    ]);
    expect(new Set(step.stops.map((stop) => stop.key))).toEqual(new Set(indeterminateKeys));
    for (const stop of step.stops) {
      expect(IndeterminateOutcomeError.isInstance(stop.error)).toBe(true);
      expect(stop.error.key).toBe(stop.key);
    }
    // It carries the first stop's fields, and the first stop as its cause.
    expect(step.key).toBe(step.stops[0]?.key);
    expect(step.tool).toBe('refund_order');
    expect(step.callId).toBe('call_a');
    expect(step.cause).toBe(step.stops[0]?.error);
    expect(step.code).toBe('STEP_STOPPED');
    expect(step.message).toContain('2 tool calls of this step did not finish cleanly');
    expect(stopErrorOf(error)).toBe(error);
    expect(model.callCount).toBe(1);
    expect(refunds).toHaveLength(2);

    // Settle both; the resumed thread replays both settled outcomes, still without a refund.
    for (const stop of step.stops) await guard.resolve(stop.key, { outcome: `verified ${stop.callId}` });
    const resumed = await agent.invoke(null, thread('t1'));
    expect(toolMessages(resumed.messages).map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_a', 'verified call_a'],
      ['call_b', 'verified call_b'],
    ]);
    expect(refunds).toHaveLength(2);
  });

  it('one stop among calls that succeed: the stop itself, after the other calls finished', async () => {
    const { guard } = recordingGuard();
    let slowRuns = 0;
    const refund = tool(
      async ({ orderId }) => {
        if (orderId === 'A-1') throw connectionReset();
        await new Promise((resolve) => setTimeout(resolve, 50));
        slowRuns += 1;
        return `Refunded ${orderId}`;
      },
      {
        name: 'refund_order',
        description: 'Refund an order.',
        schema: z.object({ orderId: z.string(), cents: z.number().int() }),
      },
    );
    const agent = createAgent({
      model: twoRefunds(),
      tools: [refund],
      middleware: [toolfenceMiddleware({ guard, policies: { refund_order: effectful } })],
    });
    const error = await agent.invoke(userMessage, thread('t1')).catch((caught: unknown) => caught);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(stopErrorOf(error)).toBe(error);
    // The slow call was not aborted by the first failure: it finished and was recorded.
    expect(slowRuns).toBe(1);
  });
});

describe('stopErrorOf (LangChain)', () => {
  const stop = (key: string) =>
    new IndeterminateOutcomeError({
      key,
      tool: 'refund_order',
      attempt: 1,
      fence: 1,
      reasonType: 'E',
      reason: 'r',
    });

  it('finds the stop inside AggregateError, cause chains and arrays; undefined when there is none', () => {
    const one = stop('k1');
    const two = stop('k2');
    const abandoned = new ExecutionAbandonedError({ key: 'k3', tool: 'sync', attempt: 3, fence: 3 });
    expect(stopErrorOf(one)).toBe(one);
    expect(stopErrorOf(new Error('wrapped', { cause: new Error('again', { cause: one }) }))).toBe(one);
    expect(stopErrorOf(new AggregateError([new Error('other'), abandoned]))).toBe(abandoned);
    const both = stopErrorOf(new AggregateError([one, new Error('x', { cause: two }), one]));
    expect(StepStoppedError.isInstance(both)).toBe(true);
    expect(StepStoppedError.callsOf(both as StepStoppedError).map((call) => call.key)).toEqual(['k1', 'k2']);
    const step = new StepStoppedError([
      { key: 'k1', tool: 'refund_order', callId: 'a', error: one },
      { key: 'k2', tool: 'refund_order', callId: 'b', error: two },
    ]);
    expect(stopErrorOf(new AggregateError([step, step]))).toBe(step);
    expect(StepStoppedError.callsOf(one)).toEqual([
      { key: 'k1', tool: 'refund_order', callId: undefined, error: one },
    ]);
    expect(stopErrorOf(new Error('plain'))).toBeUndefined();
    expect(stopErrorOf(undefined)).toBeUndefined();
    const cyclic: { cause?: unknown } = {};
    cyclic.cause = cyclic;
    expect(stopErrorOf(cyclic)).toBeUndefined();
  });
});

describe('a tool guarded twice (fenceTool and a middleware policy)', () => {
  it('runs once, replays the repeat, and is never a false indeterminate', async () => {
    const { guard, events } = recordingGuard();
    const { refundOrder, refunds } = refundTool();
    const fenced = fenceTool(refundOrder, { guard, policy: effectful });
    const model = fakeModel()
      .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 5 }, id: 'call_a' }])
      .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 5 }, id: 'call_b' }])
      .respond(new AIMessage('Refunded.'));
    const agent = createAgent({
      model,
      tools: [fenced],
      middleware: [toolfenceMiddleware({ guard, policies: { refund_order: effectful } })],
    });
    const result = await agent.invoke(userMessage, thread('t1'));
    expect(refunds).toEqual([{ orderId: 'A-1', cents: 5 }]);
    expect(toolMessages(result.messages).map((m) => [m.tool_call_id, m.content, m.status])).toEqual([
      ['call_a', 'Refunded 5 on A-1', 'success'],
      ['call_b', 'Refunded 5 on A-1', 'success'],
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('fenceTool on a fenced tool returns it as it is', () => {
    const { guard } = recordingGuard();
    const { refundOrder } = refundTool();
    const fenced = fenceTool(refundOrder, { guard, policy: effectful });
    expect(fenceTool(fenced, { guard, policy: { kind: Idempotency.IDEMPOTENT } })).toBe(fenced);
    expect((fenced as unknown as Record<symbol, unknown>)[Symbol.for('toolfence.fencedTool')]).toBe(true);
  });
});

describe('approval before the claim: humanInTheLoopMiddleware', () => {
  // Approval comes first (afterModel, an interrupt before any tool runs); the claim is made only
  // when the approved (or edited) call runs. So a rejected call claims nothing.
  function approvalAgent(options: {
    refundOrder: ReturnType<typeof refundTool>['refundOrder'];
    checkpointer: MemorySaver;
  }) {
    const { guard, events } = recordingGuard();
    const agent = (
      model = fakeModel()
        .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 500 }, id: 'call_a' }])
        .respond(new AIMessage('Done.')),
    ) =>
      createAgent({
        model,
        tools: [options.refundOrder],
        checkpointer: options.checkpointer,
        middleware: [
          toolfenceMiddleware({ guard, policies: { refund_order: effectful } }),
          humanInTheLoopMiddleware({ interruptOn: { refund_order: true } }),
        ],
      });
    return { agent, guard, events };
  }

  /** The checkpoint of the thread at the approval interrupt (to resume it more than once). */
  async function interruptedCheckpoint(
    agent: ReturnType<ReturnType<typeof approvalAgent>['agent']>,
    threadId: string,
  ) {
    const state = await agent.graph.getState(thread(threadId));
    expect(state.tasks.some((task) => task.interrupts.length > 0)).toBe(true);
    return state.config;
  }

  it('approve, then the host resumes twice: the refund runs once; the second resume replays it', async () => {
    const { refundOrder, refunds } = refundTool();
    const checkpointer = new MemorySaver();
    const { agent, events } = approvalAgent({ refundOrder, checkpointer });
    const first = agent();
    const paused = await first.invoke(userMessage, thread('t1'));
    expect(refunds).toEqual([]);
    expect(events).toEqual([]);
    expect(JSON.stringify(paused)).toContain('refund_order');
    const atApproval = await interruptedCheckpoint(first, 't1');

    const approve = new Command({ resume: { decisions: [{ type: 'approve' }] } });
    const once = await agent().invoke(approve, atApproval);
    // The same approval delivered again, from the same checkpoint (a retried webhook).
    const twice = await agent().invoke(approve, atApproval);
    expect(refunds).toEqual([{ orderId: 'A-1', cents: 500 }]);
    for (const result of [once, twice]) {
      expect(toolMessages(result.messages).map((m) => [m.tool_call_id, m.content])).toEqual([
        ['call_a', 'Refunded 500 on A-1'],
      ]);
    }
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('two resumes racing from the same approval still refund once', async () => {
    const { refundOrder, refunds } = refundTool({ delayMs: 30 });
    const checkpointer = new MemorySaver();
    const { agent } = approvalAgent({ refundOrder, checkpointer });
    const first = agent();
    await first.invoke(userMessage, thread('t2'));
    const atApproval = await interruptedCheckpoint(first, 't2');
    const approve = new Command({ resume: { decisions: [{ type: 'approve' }] } });
    await Promise.all([agent().invoke(approve, atApproval), agent().invoke(approve, atApproval)]);
    expect(refunds).toEqual([{ orderId: 'A-1', cents: 500 }]);
  });

  it('an edit runs once, with the edited arguments (its own key); resumed twice, still once', async () => {
    const { refundOrder, refunds } = refundTool();
    const checkpointer = new MemorySaver();
    const { agent, events } = approvalAgent({ refundOrder, checkpointer });
    const first = agent();
    await first.invoke(userMessage, thread('t3'));
    const atApproval = await interruptedCheckpoint(first, 't3');
    const edit = new Command({
      resume: {
        decisions: [
          { type: 'edit', editedAction: { name: 'refund_order', args: { orderId: 'A-1', cents: 300 } } },
        ],
      },
    });
    const result = await agent().invoke(edit, atApproval);
    await agent().invoke(edit, atApproval);
    expect(refunds).toEqual([{ orderId: 'A-1', cents: 300 }]);
    expect(toolMessages(result.messages).map((m) => m.content)).toEqual(['Refunded 300 on A-1']);
    expect(events.filter((event) => event.type === 'tool.started')).toHaveLength(1);
  });

  it('a rejection runs nothing and records nothing', async () => {
    const { refundOrder, refunds } = refundTool();
    const checkpointer = new MemorySaver();
    const { agent, guard, events } = approvalAgent({ refundOrder, checkpointer });
    const first = agent();
    await first.invoke(userMessage, thread('t4'));
    const reject = new Command({ resume: { decisions: [{ type: 'reject', message: 'Not this one.' }] } });
    const result = await first.invoke(reject, thread('t4'));
    expect(refunds).toEqual([]);
    expect(events).toEqual([]);
    expect(toolMessages(result.messages).map((m) => [m.tool_call_id, m.status])).toEqual([
      ['call_a', 'error'],
    ]);
    // Nothing claimed: the same refund, approved later, runs.
    const again = agent(
      fakeModel()
        .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 500 }, id: 'call_c' }])
        .respond(new AIMessage('Done.')),
    );
    await again.invoke(userMessage, thread('t5'));
    await again.invoke(new Command({ resume: { decisions: [{ type: 'approve' }] } }), thread('t5'));
    expect(refunds).toEqual([{ orderId: 'A-1', cents: 500 }]);
    expect(await guard.inspect(events[0]?.key ?? '')).toMatchObject({ state: 'completed' });
  });
});

describe('policies are own properties only (LangChain)', () => {
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__']) {
    it(`a tool named "${name}" without a policy runs as before, in fenceTools and in the middleware`, async () => {
      const { guard, events } = recordingGuard();
      let runs = 0;
      const named = tool(async ({ x }) => `${++runs}:${x}`, {
        name,
        description: 'A tool with an unlucky name.',
        schema: z.object({ x: z.number() }),
      });
      const [same] = fenceTools([named], { guard, policies: {} });
      expect(same).toBe(named);
      const result = await createAgent({
        model: fakeModel()
          .respondWithTools([{ name, args: { x: 1 }, id: 'call_a' }])
          .respond(new AIMessage('Done.')),
        tools: [named],
        middleware: [toolfenceMiddleware({ guard, policies: {} })],
      }).invoke(userMessage, thread('t1'));
      expect(toolMessages(result.messages).map((m) => m.content)).toEqual(['1:1']);
      expect(events).toEqual([]);
    });
  }
});
