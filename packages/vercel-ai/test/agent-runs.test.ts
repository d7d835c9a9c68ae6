// Issue 16: the adapter as an AI SDK developer meets it: the stops of parallel calls, a tool set
// fenced twice, tools named like Object.prototype members, and approval flows (needsApproval).
import {
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  IndeterminateOutcomeError,
  MemoryStore,
  StepStoppedError,
} from '@toolfence/core';
import { fenceTools, indeterminateErrorOf, stopErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../../test/support/scripted-model.js';

const effectful = { kind: Idempotency.EFFECTFUL } as const;

function guardWithEvents() {
  const events: GuardEvent[] = [];
  const guard = new Guard({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
  return { guard, events };
}

function refundTools(options: { fail?: boolean } = {}) {
  const refunds: Array<{ orderId: string; key: string | undefined }> = [];
  const tools = {
    refundOrder: tool({
      description: 'Refund an order',
      inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
      execute: async ({ orderId, cents }) => {
        refunds.push({ orderId, key: currentToolCall()?.idempotencyKey });
        if (options.fail === true) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return `Refunded ${cents} on ${orderId}`;
      },
    }),
  };
  return { tools, refunds };
}

const twoRefunds = () =>
  scriptedModel([
    [
      { toolName: 'refundOrder', input: { orderId: 'A-1', cents: 500 }, toolCallId: 'call_a' },
      { toolName: 'refundOrder', input: { orderId: 'B-2', cents: 700 }, toolCallId: 'call_b' },
    ],
    'Refunded.',
  ]);

describe('fenceTools: the stops of parallel calls', () => {
  it('two refunds of one step both indeterminate: the caller gets both (keys, tools, call ids) in one error', async () => {
    const { guard, events } = guardWithEvents();
    const { tools, refunds } = refundTools({ fail: true });
    const fenced = fenceTools(tools, {
      guard,
      policies: { refundOrder: { ...effectful, keyArguments: ['orderId'] } },
      runId: 'r1',
    });
    const keys = events.filter((event) => event.type === 'tool.indeterminate').map((event) => event.key);

    // Rejecting: generateText rejects with one StepStoppedError.
    const error = await generateText({
      model: twoRefunds(),
      tools: fenced,
      prompt: 'refund both',
      stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
    }).catch((caught: unknown) => caught);
    expect(StepStoppedError.isInstance(error)).toBe(true);
    const step = error as StepStoppedError;
    expect(step.stops.map((stop) => [stop.tool, stop.callId])).toEqual([
      ['refundOrder', 'call_a'],
      ['refundOrder', 'call_b'],
    ]);
    keys.push(...events.filter((event) => event.type === 'tool.indeterminate').map((event) => event.key));
    expect(step.stops.map((stop) => stop.key)).toEqual(keys);
    expect(step.key).toBe(keys[0]);
    expect(step.callId).toBe('call_a');
    expect(IndeterminateOutcomeError.isInstance(step.cause)).toBe(true);
    expect(refunds).toHaveLength(2);

    // Not rejecting: the result holds both; stopErrorOf and indeterminateErrorOf read them.
    const result = await generateText({
      model: twoRefunds(),
      tools: fenced,
      prompt: 'refund both',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    for (const read of [stopErrorOf(result), indeterminateErrorOf(result), stopErrorOf(result.steps)]) {
      expect(StepStoppedError.isInstance(read)).toBe(true);
      expect(
        StepStoppedError.callsOf(read as StepStoppedError).map((call) => [call.key, call.callId]),
      ).toEqual([
        [keys[0], 'call_a'],
        [keys[1], 'call_b'],
      ]);
    }
    expect(result.steps).toHaveLength(1);
    expect(refunds).toHaveLength(2); // the repeat was indeterminate, not re-run
  });

  it('one stopped call: the error itself carries the SDK tool call id (callsOf names it too)', async () => {
    const { guard } = guardWithEvents();
    const { tools } = refundTools({ fail: true });
    const fenced = fenceTools(tools, {
      guard,
      policies: { refundOrder: { ...effectful, keyArguments: ['orderId'] } },
      runId: 'r-one',
    });
    const result = await generateText({
      model: scriptedModel([
        [{ toolName: 'refundOrder', input: { orderId: 'C-3', cents: 900 }, toolCallId: 'call_c' }],
        'Refunded.',
      ]),
      tools: fenced,
      prompt: 'refund one',
      stopWhen: [stepCountIs(5), stopOnIndeterminate()],
    });
    const stop = stopErrorOf(result);
    expect(IndeterminateOutcomeError.isInstance(stop)).toBe(true);
    expect((stop as IndeterminateOutcomeError).callId).toBe('call_c');
    expect(StepStoppedError.callsOf(stop as IndeterminateOutcomeError).map((call) => call.callId)).toEqual([
      'call_c',
    ]);
  });

  it('stopErrorOf finds a stop in a rejection, a cause chain, an AggregateError and a tool-error part', () => {
    const one = new IndeterminateOutcomeError({
      key: 'k1',
      tool: 'refundOrder',
      attempt: 1,
      fence: 1,
      reasonType: 'E',
      reason: 'r',
    });
    expect(stopErrorOf(one)).toBe(one);
    expect(stopErrorOf(new Error('wrapped', { cause: one }))).toBe(one);
    expect(stopErrorOf(new AggregateError([new Error('x'), one]))).toBe(one);
    expect(stopErrorOf({ type: 'tool-error', toolCallId: 'c1', error: one })).toBe(one);
    expect(stopErrorOf({ steps: [{ content: [{ type: 'tool-result', output: 'ok' }] }] })).toBeUndefined();
    expect(stopErrorOf(new Error('plain'))).toBeUndefined();
  });
});

describe('fenceTools applied twice', () => {
  it('passes an already fenced tool through: one execution, the repeat replays, never a false indeterminate', async () => {
    const { guard, events } = guardWithEvents();
    const { tools, refunds } = refundTools();
    const options = { guard, policies: { refundOrder: effectful }, runId: 'r1' };
    const once = fenceTools(tools, options);
    const twice = fenceTools(once, options);
    expect(twice.refundOrder).toBe(once.refundOrder);
    const result = await generateText({
      model: scriptedModel([
        [{ toolName: 'refundOrder', input: { orderId: 'A-1', cents: 5 } }],
        [{ toolName: 'refundOrder', input: { orderId: 'A-1', cents: 5 } }],
        'done',
      ]),
      tools: twice,
      prompt: 'refund',
      stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
    });
    expect(refunds).toHaveLength(1);
    expect(result.steps.flatMap((s) => s.toolResults.map((r) => r.output))).toEqual([
      'Refunded 5 on A-1',
      'Refunded 5 on A-1',
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });
});

describe('fenceTools: policies are own properties only', () => {
  for (const name of [
    'constructor',
    'toString',
    'valueOf',
    'hasOwnProperty',
    '__defineGetter__',
    '__proto__',
  ]) {
    it(`a tool named "${name}" without a policy passes through; with one, it is guarded`, async () => {
      const { guard, events } = guardWithEvents();
      let runs = 0;
      const named = tool({
        inputSchema: z.object({ x: z.number() }),
        execute: async ({ x }) => `${++runs}:${x}`,
      });
      const tools: Record<string, typeof named> = {};
      Object.defineProperty(tools, name, {
        value: named,
        enumerable: true,
        writable: true,
        configurable: true,
      });
      const plain = fenceTools(tools, { guard, policies: {}, runId: 'r' });
      expect(Object.keys(plain)).toEqual([name]);
      expect(Object.getOwnPropertyDescriptor(plain, name)?.value).toBe(named);
      expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);

      const policies: Record<string, typeof effectful> = {};
      Object.defineProperty(policies, name, { value: effectful, enumerable: true });
      const guarded = fenceTools(tools, { guard, policies, runId: 'r' });
      const fencedTool = Object.getOwnPropertyDescriptor(guarded, name)?.value as typeof named;
      expect(fencedTool).not.toBe(named);
      const execute = fencedTool.execute as (input: unknown, options: unknown) => Promise<unknown>;
      const options = { toolCallId: 'c1', messages: [] };
      expect(await execute({ x: 1 }, options)).toBe('1:1');
      expect(await execute({ x: 1 }, { ...options, toolCallId: 'c2' })).toBe('1:1');
      expect(runs).toBe(1);
      expect(events.map((event) => event.type)).toEqual([
        'tool.started',
        'tool.completed',
        'tool.deduplicated',
      ]);
    });
  }
});

describe('approval before the claim: needsApproval', () => {
  // The SDK asks for approval before it executes; the claim is made only when the approved call
  // executes. An approval belongs to one tool call: other arguments are another call, another key
  // and (the SDK's rule) another approval.
  function bookingSetup() {
    const { guard, events } = guardWithEvents();
    const bookings: Array<{ seat: string; key: string | undefined }> = [];
    const tools = fenceTools(
      {
        bookSeat: tool({
          inputSchema: z.object({ seat: z.string() }),
          needsApproval: true,
          execute: async ({ seat }) => {
            bookings.push({ seat, key: currentToolCall()?.idempotencyKey });
            return `Booked ${seat}`;
          },
        }),
      },
      { guard, policies: { bookSeat: effectful }, runId: 'conversation-1' },
    );
    return { tools, bookings, events };
  }

  async function askForApproval(
    tools: ReturnType<typeof bookingSetup>['tools'],
    seat: string,
    callId: string,
  ) {
    const prompt: ModelMessage[] = [{ role: 'user', content: `book ${seat}` }];
    const result = await generateText({
      model: scriptedModel([[{ toolName: 'bookSeat', input: { seat }, toolCallId: callId }], 'after']),
      tools,
      messages: prompt,
      stopWhen: stepCountIs(5),
    });
    const request = result.content.find((part) => part.type === 'tool-approval-request');
    expect(request?.toolCall.toolCallId).toBe(callId);
    return { messages: [...prompt, ...result.response.messages], approvalId: request?.approvalId as string };
  }

  /**
   * The results of approved calls, [call id, output], as the model was sent them (the SDK runs
   * an approved call before the first model call; AI SDK 6 also lists it in the response
   * messages, AI SDK 7 does not, both put it in the prompt).
   */
  function approvedOutputs(model: ReturnType<typeof scriptedModel>) {
    const outputs: Array<[string, unknown]> = [];
    for (const message of model.doGenerateCalls[0]?.prompt ?? []) {
      if (message.role !== 'tool') continue;
      for (const part of message.content as Array<{ type: string; toolCallId?: string; output?: unknown }>) {
        if (part.type !== 'tool-result' || part.toolCallId === undefined) continue;
        outputs.push([part.toolCallId, (part.output as { value?: unknown }).value]);
      }
    }
    return outputs;
  }

  const approve = (approvalId: string, approved = true): ModelMessage => ({
    role: 'tool',
    content: [{ type: 'tool-approval-response', approvalId, approved }],
  });

  it('an approved call submitted twice (the host resumes twice) runs once; the second replays', async () => {
    const { tools, bookings, events } = bookingSetup();
    const pending = await askForApproval(tools, '3F', 'call_1');
    expect(bookings).toEqual([]);
    expect(events).toEqual([]); // asking for approval claims nothing

    const models = [scriptedModel(['Booked.']), scriptedModel(['Booked.'])];
    for (const model of models) {
      await generateText({
        model,
        tools,
        messages: [...pending.messages, approve(pending.approvalId)],
        stopWhen: stepCountIs(5),
      });
    }
    expect(bookings).toHaveLength(1);
    expect(bookings[0]?.seat).toBe('3F');
    // Both runs sent the model the one booking's result for the approved call.
    for (const model of models) expect(approvedOutputs(model)).toEqual([['call_1', 'Booked 3F']]);
    expect(events.map((event) => event.type)).toEqual([
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('an approval never authorises other arguments: another seat is a new key and needs its own approval', async () => {
    const { tools, bookings, events } = bookingSetup();
    const first = await askForApproval(tools, '3F', 'call_1');
    await generateText({
      model: scriptedModel(['Booked.']),
      tools,
      messages: [...first.messages, approve(first.approvalId)],
      stopWhen: stepCountIs(5),
    });
    // The model now wants another seat: the SDK asks again; nothing runs on the old approval.
    const second = await askForApproval(tools, '4A', 'call_2');
    expect(bookings.map((booking) => booking.seat)).toEqual(['3F']);
    await generateText({
      model: scriptedModel(['Booked.']),
      tools,
      messages: [...second.messages, approve(second.approvalId)],
      stopWhen: stepCountIs(5),
    });
    expect(bookings.map((booking) => booking.seat)).toEqual(['3F', '4A']);
    expect(bookings[0]?.key).not.toBe(bookings[1]?.key);
    expect(events.filter((event) => event.type === 'tool.started')).toHaveLength(2);
  });

  it('a denied call runs nothing and records nothing', async () => {
    const { tools, bookings, events } = bookingSetup();
    const pending = await askForApproval(tools, '3F', 'call_1');
    const result = await generateText({
      model: scriptedModel(['Not booked.']),
      tools,
      messages: [...pending.messages, approve(pending.approvalId, false)],
      stopWhen: stepCountIs(5),
    });
    expect(bookings).toEqual([]);
    expect(events).toEqual([]);
    expect(result.text).toBe('Not booked.');
  });
});
