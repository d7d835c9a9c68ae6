// Mastra agents with the real runtime and a scripted model (the AI SDK's MockLanguageModelV3):
// the same refund twice in one workflow step, a declined tool call resumed again from the
// snapshot it was suspended in, and a refund whose reply is lost. Plain first, then fenced.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { LibSQLStore } from '@mastra/libsql';
import { IndeterminateOutcomeError, MemoryStore, StepStoppedError } from '@toolfence/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fenceAgent, fenceTools, stopErrorOf } from '../src/index.js';
import {
  agentWith,
  Payments,
  recordingGuard,
  refundCall,
  refundPolicy,
  refundTool,
  scriptedModel,
  snapshotsOf,
} from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'toolfence-mastra-agent-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const storage = () => new LibSQLStore({ id: 'snapshots', url: `file:${join(dir, `agent-${files++}.db`)}` });
const policies = { refund_payment: refundPolicy };

/** A workflow whose one step asks the support agent to refund, as a host's job would. */
function supportWorkflow(agent: Agent) {
  const ask = createStep({
    id: 'ask-support',
    inputSchema: z.object({ ticket: z.string() }),
    outputSchema: z.object({ text: z.string(), refundIds: z.array(z.string()) }),
    execute: async ({ inputData, mastra }) => {
      const result = await mastra.getAgent('support').generate(inputData.ticket);
      const refundIds = result.toolResults.map(
        (part) => (part.payload.result as { refundId: string } | undefined)?.refundId ?? 'none',
      );
      return { text: result.text, refundIds };
    },
  });
  const workflow = createWorkflow({
    id: 'support-workflow',
    inputSchema: z.object({ ticket: z.string() }),
    outputSchema: z.any(),
  })
    .then(ask)
    .commit();
  const mastra = new Mastra({
    agents: { support: agent },
    workflows: { workflow },
    storage: storage(),
    logger: false,
  });
  return mastra.getWorkflow('workflow');
}

describe('the same refund twice in one workflow step', () => {
  const model = () => scriptedModel([[refundCall('call_1'), refundCall('call_2')], 'Refunded.']);

  it('plain Mastra refunds twice', async () => {
    const payments = new Payments();
    const run = await supportWorkflow(
      agentWith(model(), { refund_payment: refundTool(payments) }),
    ).createRun();
    const result = await run.start({ inputData: { ticket: 'Refund A-100' } });
    expect(result.status).toBe('success');
    expect(payments.refunds).toHaveLength(2);
  });

  it('fenced (fenceAgent): one refund, both calls answered with it', async () => {
    const payments = new Payments();
    const events: { type: string }[] = [];
    const agent = fenceAgent(agentWith(model(), { refund_payment: refundTool(payments) }), {
      guard: recordingGuard(new MemoryStore(), events as never),
      policies,
    });
    const run = await supportWorkflow(agent).createRun();
    const result = await run.start({ inputData: { ticket: 'Refund A-100' } });
    expect(result.status).toBe('success');
    expect(payments.refunds).toHaveLength(1);
    expect(result.status === 'success' && result.result).toEqual({
      text: 'Refunded.',
      refundIds: ['re_1', 're_1'],
    });
    expect(events.filter((event) => event.type === 'tool.deduplicated')).toHaveLength(1);
  });
});

describe('a declined tool call resumed again from its suspended snapshot', () => {
  /** Suspend for approval, decline, then resume with an approval from the snapshot taken before. */
  async function declineThenLateApproval(build: (agent: Agent) => Agent, payments: Payments) {
    const plain = agentWith(scriptedModel([[refundCall('call_1')], 'Declined, then?', 'Late.']), {
      refund_payment: refundTool(payments, { requireApproval: true }),
    });
    const mastra = new Mastra({ agents: { support: build(plain) }, storage: storage(), logger: false });
    const agent = mastra.getAgent('support');
    const paused = await agent.generate('Refund A-100');
    expect(paused.finishReason).toBe('suspended');
    const runId = paused.runId ?? '';
    expect(runId).not.toBe('');
    const snapshots = await snapshotsOf(mastra);
    const saved = await Promise.all(
      ['agentic-loop', 'executionWorkflow'].map(async (workflowName) => ({
        workflowName,
        snapshot: await snapshots.loadWorkflowSnapshot({ workflowName, runId }),
      })),
    );
    const declined = await agent.declineToolCallGenerate({ runId, toolCallId: 'call_1' });
    // A resume that read the run while it was still suspended (a second server, a retried job).
    for (const { workflowName, snapshot } of saved) {
      await snapshots.persistWorkflowSnapshot({
        workflowName,
        runId,
        snapshot: snapshot as never,
      });
    }
    const late = await agent.approveToolCallGenerate({ runId, toolCallId: 'call_1' });
    return { declined, late };
  }

  it('plain Mastra runs the declined refund on the late approval', async () => {
    const payments = new Payments();
    await declineThenLateApproval((agent) => agent, payments);
    expect(payments.refunds).toHaveLength(1);
  });

  it('fenced: the decline is the call’s answer, the late approval is declined too, nothing refunded', async () => {
    const payments = new Payments();
    const guard = recordingGuard(new MemoryStore());
    const { late } = await declineThenLateApproval(
      (agent) => fenceAgent(agent, { guard, policies }),
      payments,
    );
    expect(payments.refunds).toHaveLength(0);
    expect(late.toolResults).toHaveLength(0);
  });
});

describe('a refund whose reply is lost, in the agent loop', () => {
  it("'throw': generate() rejects with the stop, the model is not called again, one refund", async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const model = scriptedModel([[refundCall('call_1')], [refundCall('call_2')], 'Stopped.']);
    const agent = fenceAgent(agentWith(model, { refund_payment: refundTool(payments) }), {
      guard: recordingGuard(new MemoryStore()),
      policies,
    });
    const error = await agent.generate('Refund A-100').then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(IndeterminateOutcomeError.isInstance(error) && error.callId).toBe('call_1');
    expect(stopErrorOf(error)).toBe(error);
    expect(model.doGenerateCalls).toHaveLength(1);
    expect(payments.refunds).toHaveLength(1);
  });

  it('fenceTools without fenceAgent: the model gets the tool error, its retry is refused, not run', async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const model = scriptedModel([[refundCall('call_1')], [refundCall('call_2')], 'Stopped.']);
    const tools = fenceTools(
      { refund_payment: refundTool(payments) },
      { guard: recordingGuard(new MemoryStore()), policies },
    );
    const result = await agentWith(model, tools).generate('Refund A-100');
    expect(payments.refunds).toHaveLength(1);
    // Both calls stopped on the one key (Mastra keeps only the message; the stop is read back
    // from it), and the model's retry was answered with the stop, not run.
    const calls = StepStoppedError.callsOf(stopErrorOf(result) as StepStoppedError);
    expect(calls.map((call) => call.callId)).toEqual(['call_1', 'call_2']);
    expect(new Set(calls.map((call) => call.key)).size).toBe(1);
    expect(calls.every((call) => IndeterminateOutcomeError.isInstance(call.error))).toBe(true);
  });

  it("'report': the model is told the refund may have happened and must not be retried", async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const model = scriptedModel([[refundCall('call_1')], 'Told.']);
    const agent = fenceAgent(agentWith(model, { refund_payment: refundTool(payments) }), {
      guard: recordingGuard(new MemoryStore()),
      policies,
      onIndeterminate: 'report',
    });
    const result = await agent.generate('Refund A-100');
    expect(payments.refunds).toHaveLength(1);
    const answer = result.toolResults[0]?.payload.result;
    expect(String(answer)).toMatch(/refund_payment/);
    expect(String(answer)).toMatch(/not/i);
  });
});
