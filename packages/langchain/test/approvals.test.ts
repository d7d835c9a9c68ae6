// Single-use approvals through langchain's own flow (humanInTheLoopMiddleware's interrupt, resumed
// with a Command carrying the decisions): the server records the decisions with recordApprovals
// against the thread's checkpoint, the fenced tool's claim consumes them. A resume command alone
// can be delivered twice, with an edit nobody recorded, or flipped; these tests show what the store adds.
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import {
  ApprovalDeniedError,
  ApprovalRequiredError,
  Idempotency,
  type IdempotencyPolicy,
} from '@toolfence/core';
import { recordApprovals, stopErrorOf, toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent, fakeModel, humanInTheLoopMiddleware, toolRetryMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recordingGuard, userMessage } from './support.js';

const needsApproval: IdempotencyPolicy = {
  kind: Idempotency.EFFECTFUL,
  keyArguments: ['orderId'],
  approval: 'required',
};

function refundTool(options: { delayMs?: number; failFirst?: boolean } = {}) {
  const refunds: string[] = [];
  const refundOrder = tool(
    async ({ orderId, cents }) => {
      if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      refunds.push(`${orderId} ${cents}`);
      if (options.failFirst === true && refunds.length === 1)
        throw new Error('provider said 503, nothing charged');
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

type Layers = 'plain' | 'toolfence outside the retry' | 'toolfence inside the retry';

function setup(
  options: { policy?: IdempotencyPolicy; layers?: Layers; delayMs?: number; failFirst?: boolean } = {},
) {
  const { guard, types } = recordingGuard();
  const { refundOrder, refunds } = refundTool(options);
  const checkpointer = new MemorySaver();
  const toolfence = toolfenceMiddleware({
    guard,
    policies: { refund_order: options.policy ?? needsApproval },
  });
  const hitl = humanInTheLoopMiddleware({ interruptOn: { refund_order: true } });
  const retry = toolRetryMiddleware({ initialDelayMs: 1, jitter: false });
  const layers = options.layers ?? 'plain';
  const middleware =
    layers === 'plain'
      ? [toolfence, hitl]
      : layers === 'toolfence outside the retry'
        ? [toolfence, retry, hitl]
        : [retry, toolfence, hitl];
  const agent = () =>
    createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-1', cents: 500 }, id: 'call_a' }])
        .respond(new AIMessage('Done.')),
      tools: [refundOrder],
      checkpointer,
      middleware,
    });
  return { agent, guard, refunds, types };
}

/** The first run to the approval interrupt; returns the checkpoint config to resume from. */
async function pause(agent: ReturnType<ReturnType<typeof setup>['agent']>, threadId: string) {
  await agent.invoke(userMessage, { configurable: { thread_id: threadId } });
  const state = await agent.graph.getState({ configurable: { thread_id: threadId } });
  expect(state.tasks.some((task) => task.interrupts.length > 0)).toBe(true);
  return state.config;
}

const toolContents = (messages: unknown[]) =>
  messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message)).map((m) => m.content);

const approve = { decisions: [{ type: 'approve' as const }] };
const reject = { decisions: [{ type: 'reject' as const, message: 'not this one' }] };

describe('recordApprovals: single-use approvals through humanInTheLoopMiddleware', () => {
  it('two concurrent resumes with the same approval: one refund, both get its result', async () => {
    const { agent, refunds, types } = setup({ delayMs: 30 });
    const atApproval = await pause(agent(), 't1');
    const results = await Promise.all(
      [1, 2].map(async () => {
        const recorded = await recordApprovals(agent(), atApproval, approve, { by: 'supervisor' });
        expect(
          recorded.map((entry) => [entry.toolName, entry.toolCallId, entry.approved, entry.status]),
        ).toEqual([['refund_order', 'call_a', true, 'decided']]);
        return agent().invoke(new Command({ resume: approve }), atApproval);
      }),
    );
    expect(refunds).toEqual(['A-1 500']);
    for (const result of results) expect(toolContents(result.messages)).toEqual(['Refunded 500 on A-1']);
    expect(types('refund_order').filter((type) => type === 'tool.approval_consumed')).toHaveLength(1);
  });

  it('an approval replayed after completion replays the outcome and runs nothing', async () => {
    const { agent, refunds } = setup();
    const atApproval = await pause(agent(), 't2');
    await recordApprovals(agent(), atApproval, approve);
    await agent().invoke(new Command({ resume: approve }), atApproval);
    const again = await recordApprovals(agent(), atApproval, approve);
    expect(again.map((entry) => entry.status)).toEqual(['consumed']);
    const replayed = await agent().invoke(new Command({ resume: approve }), atApproval);
    expect(toolContents(replayed.messages)).toEqual(['Refunded 500 on A-1']);
    expect(refunds).toEqual(['A-1 500']);
  });

  it('an approval does not authorise other arguments: an unrecorded edit stops, nothing runs', async () => {
    const { agent, refunds } = setup();
    const atApproval = await pause(agent(), 't3');
    await recordApprovals(agent(), atApproval, approve);
    // A resume that edits the call to another order, without its decision being recorded.
    const edit = {
      decisions: [
        {
          type: 'edit' as const,
          editedAction: { name: 'refund_order', args: { orderId: 'B-9', cents: 500 } },
        },
      ],
    };
    const error = await agent()
      .invoke(new Command({ resume: edit }), atApproval)
      .catch((caught: unknown) => caught);
    expect(ApprovalRequiredError.isInstance(stopErrorOf(error))).toBe(true);
    expect(refunds).toEqual([]);
    // Recorded, the operator's edit is approved for its own arguments and runs once.
    const recorded = await recordApprovals(agent(), atApproval, edit);
    expect(recorded.map((entry) => entry.status)).toEqual(['decided']);
    await agent().invoke(new Command({ resume: edit }), atApproval);
    expect(refunds).toEqual(['B-9 500']);
  });

  it('a rejection is recorded and stays a denial: the same interrupt resumed as approved runs nothing', async () => {
    const { agent, refunds, guard } = setup();
    const atApproval = await pause(agent(), 't4');
    const recorded = await recordApprovals(agent(), atApproval, reject, {
      by: 'supervisor',
      reason: 'fraud check',
    });
    expect(recorded.map((entry) => [entry.approved, entry.status])).toEqual([[false, 'decided']]);
    // Before the server resumed with its rejection, a second request (a replayed or forged
    // webhook) arrives with the decision flipped: recorded too, it finds the denial.
    expect((await recordApprovals(agent(), atApproval, approve)).map((entry) => entry.status)).toEqual([
      'denied',
    ]);
    const error = await agent()
      .invoke(new Command({ resume: approve }), atApproval)
      .catch((caught: unknown) => caught);
    expect(ApprovalDeniedError.isInstance(stopErrorOf(error))).toBe(true);
    expect(refunds).toEqual([]);
    const denied = await guard.approvals({ states: ['denied'] });
    expect(denied.records.map((record) => [record.tool, record.approval?.by])).toEqual([
      ['refund_order', 'supervisor'],
    ]);
  });

  it('a rejection resumed runs nothing; the thread keeps it (LangGraph binds a resume to its checkpoint)', async () => {
    const { agent, refunds } = setup();
    const atApproval = await pause(agent(), 't4b');
    await recordApprovals(agent(), atApproval, reject);
    const rejected = await agent().invoke(new Command({ resume: reject }), atApproval);
    expect(toolContents(rejected.messages)).toEqual(['not this one']);
    const again = await agent().invoke(new Command({ resume: approve }), atApproval);
    expect(toolContents(again.messages)).toEqual(['not this one']);
    expect(refunds).toEqual([]);
  });

  it('without a recorded decision, the approved resume runs nothing (fail closed)', async () => {
    const { agent, refunds } = setup();
    const atApproval = await pause(agent(), 't5');
    const error = await agent()
      .invoke(new Command({ resume: approve }), atApproval)
      .catch((caught: unknown) => caught);
    expect(ApprovalRequiredError.isInstance(stopErrorOf(error))).toBe(true);
    expect(refunds).toEqual([]);
  });

  it('refuses decisions that do not match the interrupt, and a thread without one', async () => {
    const { agent } = setup();
    const atApproval = await pause(agent(), 't6');
    await expect(recordApprovals(agent(), atApproval, { decisions: [] })).rejects.toThrow(
      /0 decision\(s\) for 1/,
    );
    await expect(recordApprovals(agent(), { configurable: { thread_id: 'none' } }, approve)).rejects.toThrow(
      /no humanInTheLoopMiddleware interrupt/,
    );
  });

  for (const layers of ['toolfence outside the retry', 'toolfence inside the retry'] as const) {
    it(`${layers}: an approved idempotent call that fails runs once; the used approval is not retried`, async () => {
      // A released claim ends the approval's life: a retry would need a new approval (single use).
      const { agent, refunds, types } = setup({
        layers,
        failFirst: true,
        policy: { kind: Idempotency.IDEMPOTENT, keyArguments: ['orderId'], approval: 'required' },
      });
      const atApproval = await pause(agent(), `retry-${layers}`);
      await recordApprovals(agent(), atApproval, approve);
      const outcome = await agent()
        .invoke(new Command({ resume: approve }), atApproval)
        .catch((caught: unknown) => caught);
      expect(refunds).toEqual(['A-1 500']);
      if (layers === 'toolfence outside the retry') {
        // The retry inside toolfence ran the call again: its claim found no approval and stopped the run.
        expect(ApprovalRequiredError.isInstance(stopErrorOf(outcome))).toBe(true);
        expect(types('refund_order')).toEqual([
          'tool.approval_decided',
          'tool.approval_consumed',
          'tool.started',
          'tool.failed',
          'tool.approval_required',
        ]);
      } else {
        // toolfence answered the error with a ToolMessage (as createAgent does): nothing to retry.
        const messages = (outcome as { messages: unknown[] }).messages;
        expect(String(toolContents(messages)[0])).toContain('provider said 503');
        expect(types('refund_order')).toEqual([
          'tool.approval_decided',
          'tool.approval_consumed',
          'tool.started',
          'tool.failed',
        ]);
      }
    });

    it(`${layers}: two concurrent resumes with the same approval refund once`, async () => {
      const { agent, refunds } = setup({ layers, delayMs: 30 });
      const atApproval = await pause(agent(), `race-${layers}`);
      await recordApprovals(agent(), atApproval, approve);
      const results = await Promise.all([
        agent().invoke(new Command({ resume: approve }), atApproval),
        agent().invoke(new Command({ resume: approve }), atApproval),
      ]);
      expect(refunds).toEqual(['A-1 500']);
      for (const result of results) expect(toolContents(result.messages)).toEqual(['Refunded 500 on A-1']);
    });
  }
});
