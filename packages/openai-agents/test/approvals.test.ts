// Single-use approvals through the SDK's own flow (needsApproval, result.interruptions,
// state.approve / state.reject, RunState serialised and resumed): the server records its decision
// with recordApprovals, the fenced tool's claim consumes it. A RunState alone can be resumed
// twice, edited or flipped by whoever holds its serialised form; these tests show what the store adds.
import { RunState, run } from '@openai/agents-core';
import { ApprovalDeniedError, ApprovalRequiredError, type GuardEvent, MemoryStore } from '@toolfence/core';
import { fenceAgent, recordApprovals, stopErrorOf } from '@toolfence/openai-agents';
import { describe, expect, it } from 'vitest';
import {
  agentWith,
  Payments,
  recordingGuard,
  refundCall,
  refundPolicy,
  refundTool,
  scriptedModel,
} from './support.js';

const approvalPolicy = { refund_payment: { ...refundPolicy.refund_payment, approval: 'required' as const } };

function setup(options: { approval?: boolean; turns?: number } = {}) {
  const payments = new Payments();
  const events: GuardEvent[] = [];
  const guard = recordingGuard(new MemoryStore(), events);
  const final = Array.from({ length: options.turns ?? 3 }, () => 'Refunded.');
  const agent = fenceAgent(
    agentWith(scriptedModel([[refundCall('call_1')], ...final]), [
      refundTool(payments, { needsApproval: true }),
    ]),
    { guard, policies: options.approval === false ? refundPolicy : approvalPolicy, runId: 'ticket-1' },
  );
  return { payments, events, guard, agent };
}

type Agent = ReturnType<typeof setup>['agent'];

/** The first run: the model asks for a refund, the SDK stops for approval. */
async function pause(agent: Agent) {
  const paused = await run(agent, 'Refund A-100');
  expect(paused.interruptions).toHaveLength(1);
  return paused;
}

/** The output the resumed run gave the model for call_1. */
async function resume(agent: Agent, serialised: string) {
  const result = await run(agent, await RunState.fromString(agent, serialised));
  const output = result.newItems.find(
    (item) =>
      item.type === 'tool_call_output_item' && (item.rawItem as { callId?: string }).callId === 'call_1',
  );
  return { final: result.finalOutput, output: (output as { output?: unknown } | undefined)?.output };
}

/** The serialised state with the call's order id changed (a client editing its copy). */
const withOrder = (serialised: string, orderId: string) => serialised.replaceAll('A-100', orderId);

describe('recordApprovals: single-use approvals through RunState', () => {
  it('two concurrent resumes of one approved state: one refund, both get its result', async () => {
    const { payments, events, agent } = setup();
    const paused = await pause(agent);
    paused.state.approve(paused.interruptions[0]!);
    const recorded = await recordApprovals(paused.state, { by: 'agent-supervisor' });
    expect(recorded.map((entry) => [entry.toolName, entry.callId, entry.approved, entry.status])).toEqual([
      ['refund_payment', 'call_1', true, 'decided'],
    ]);
    const serialised = paused.state.toString();
    const [first, second] = await Promise.all([resume(agent, serialised), resume(agent, serialised)]);
    expect(payments.refunds).toEqual(['A-100 2250']);
    expect(first).toEqual({ final: 'Refunded.', output: { refundId: 're_1' } });
    expect(second).toEqual({ final: 'Refunded.', output: { refundId: 're_1' } });
    const consumed = events.filter((event) => event.type === 'tool.approval_consumed');
    expect(consumed.map((event) => event.approval)).toEqual([{ approved: true, by: 'agent-supervisor' }]);
  });

  it('an approval replayed after completion replays the outcome and runs nothing', async () => {
    const { payments, agent } = setup();
    const paused = await pause(agent);
    paused.state.approve(paused.interruptions[0]!);
    await recordApprovals(paused.state);
    const serialised = paused.state.toString();
    expect((await resume(agent, serialised)).output).toEqual({ refundId: 're_1' });
    const replayed = await RunState.fromString(agent, serialised);
    expect((await recordApprovals(replayed)).map((entry) => entry.status)).toEqual(['consumed']);
    expect((await resume(agent, serialised)).output).toEqual({ refundId: 're_1' });
    expect(payments.refunds).toHaveLength(1);
  });

  it('a state edited to other arguments after the approval is refused: nothing runs', async () => {
    const { payments, agent } = setup();
    const paused = await pause(agent);
    paused.state.approve(paused.interruptions[0]!);
    await recordApprovals(paused.state);
    const error = await resume(agent, withOrder(paused.state.toString(), 'B-999')).catch((caught) => caught);
    expect(ApprovalRequiredError.isInstance(stopErrorOf(error))).toBe(true);
    expect(payments.refunds).toEqual([]);
  });

  it('without the store, the same edited state refunds on the SDK approval alone', async () => {
    const { payments, agent } = setup({ approval: false });
    const paused = await pause(agent);
    paused.state.approve(paused.interruptions[0]!);
    await resume(agent, withOrder(paused.state.toString(), 'B-999'));
    expect(payments.refunds).toEqual(['B-999 2250']);
  });

  it('a rejection is recorded and stays a denial: a copy of the state resumed as approved runs nothing', async () => {
    const { payments, agent, guard } = setup();
    const paused = await pause(agent);
    const undecided = paused.state.toString();
    paused.state.reject(paused.interruptions[0]!);
    const recorded = await recordApprovals(paused.state, { by: 'agent-supervisor', reason: 'duplicate' });
    expect(recorded.map((entry) => [entry.approved, entry.status])).toEqual([[false, 'decided']]);
    const rejected = await resume(agent, paused.state.toString());
    expect(rejected.final).toBe('Refunded.');
    expect(payments.refunds).toEqual([]);

    // The copy taken before the decision, approved by whoever holds it, and even recorded.
    const flipped = await RunState.fromString(agent, undecided);
    flipped.approve(flipped.getInterruptions()[0]!);
    expect((await recordApprovals(flipped)).map((entry) => entry.status)).toEqual(['denied']);
    const error = await run(agent, flipped).catch((caught) => caught);
    expect(ApprovalDeniedError.isInstance(stopErrorOf(error))).toBe(true);
    expect(payments.refunds).toEqual([]);
    const denied = await guard.approvals({ states: ['denied'] });
    expect(denied.records.map((record) => [record.tool, record.approval?.reason])).toEqual([
      ['refund_payment', 'duplicate'],
    ]);
  });

  it('a state approved without a recorded decision runs nothing (fail closed)', async () => {
    const { payments, agent } = setup();
    const paused = await pause(agent);
    paused.state.approve(paused.interruptions[0]!);
    const error = await run(agent, paused.state).catch((caught) => caught);
    expect(ApprovalRequiredError.isInstance(stopErrorOf(error))).toBe(true);
    expect(payments.refunds).toEqual([]);
  });

  it('skips undecided interruptions and tools without an approval policy', async () => {
    const withPolicy = setup();
    const paused = await pause(withPolicy.agent);
    expect(await recordApprovals(paused.state)).toEqual([]);
    const plain = setup({ approval: false });
    const plainPaused = await pause(plain.agent);
    plainPaused.state.approve(plainPaused.interruptions[0]!);
    expect(await recordApprovals(plainPaused.state)).toEqual([]);
  });
});
