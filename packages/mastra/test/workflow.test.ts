// Mastra workflows with the real runtime (@mastra/core's default engine, snapshots in LibSQL):
// a finished run resumed again, a denied approval resumed again, a stop under a step's retries,
// and an aborted tool. Each case runs plain first, to show the runtime repeats the effect, then
// fenced.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Mastra } from '@mastra/core/mastra';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { LibSQLStore } from '@mastra/libsql';
import { IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fenceStep, stopErrorOf } from '../src/index.js';
import { Payments, recordingGuard, refundWorkflow, snapshotsOf } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'toolfence-mastra-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const dbFile = () => join(dir, `snapshots-${files++}.db`);
const input = { orderId: 'A-100', amountCents: 2250 };

/** Start a run to its approval, and keep the snapshot a late resume would read. */
async function suspendedRun(workflow: ReturnType<typeof refundWorkflow>) {
  const run = await workflow.workflow.createRun();
  const started = await run.start({ inputData: input });
  expect(started.status).toBe('suspended');
  const snapshots = await snapshotsOf(workflow.mastra);
  const suspended = await snapshots.loadWorkflowSnapshot({
    workflowName: 'refund-workflow',
    runId: run.runId,
  });
  expect(suspended?.status).toBe('suspended');
  // A resume that read the run while it was still suspended (a second worker, a retried job).
  const resumeLate = async (approved: boolean) => {
    await snapshots.persistWorkflowSnapshot({
      workflowName: 'refund-workflow',
      runId: run.runId,
      snapshot: structuredClone(suspended) as never,
    });
    const again = await workflow.workflow.createRun({ runId: run.runId });
    return again.resume({ step: 'approve', resumeData: { approved } });
  };
  return { run, resumeLate };
}

describe('a finished run resumed again', () => {
  it('plain Mastra refunds twice', async () => {
    const payments = new Payments();
    const { run, resumeLate } = await suspendedRun(refundWorkflow({ payments, dbFile: dbFile() }));
    expect((await run.resume({ step: 'approve', resumeData: { approved: true } })).status).toBe('success');
    expect((await resumeLate(true)).status).toBe('success');
    expect(payments.refunds).toHaveLength(2);
  });

  it('fenced: the refund runs once, the second resume gets the recorded refund', async () => {
    const payments = new Payments();
    const events: { type: string }[] = [];
    const guard = recordingGuard(new MemoryStore(), events as never);
    const { run, resumeLate } = await suspendedRun(refundWorkflow({ payments, guard, dbFile: dbFile() }));
    const first = await run.resume({ step: 'approve', resumeData: { approved: true } });
    expect(first.status).toBe('success');
    const second = await resumeLate(true);
    expect(second.status).toBe('success');
    expect(payments.refunds).toHaveLength(1);
    expect(second.status === 'success' && second.result).toEqual(first.status === 'success' && first.result);
    expect(events.filter((event) => event.type === 'tool.deduplicated').length).toBeGreaterThanOrEqual(1);
  });
});

describe('a denied approval resumed again', () => {
  it('plain Mastra: a late resume with an approval refunds after the denial', async () => {
    const payments = new Payments();
    const { run, resumeLate } = await suspendedRun(refundWorkflow({ payments, dbFile: dbFile() }));
    const denied = await run.resume({ step: 'approve', resumeData: { approved: false } });
    expect(denied.status === 'success' && denied.result).toEqual({ denied: { refundId: 'none: denied' } });
    await resumeLate(true);
    expect(payments.refunds).toHaveLength(1);
  });

  it('fenced: the denial stays, the late approval is answered with it and nothing is refunded', async () => {
    const payments = new Payments();
    const guard = recordingGuard(new MemoryStore());
    const { run, resumeLate } = await suspendedRun(refundWorkflow({ payments, guard, dbFile: dbFile() }));
    const denied = await run.resume({ step: 'approve', resumeData: { approved: false } });
    expect(denied.status === 'success' && denied.result).toEqual({ denied: { refundId: 'none: denied' } });
    const late = await resumeLate(true);
    expect(late.status === 'success' && late.result).toEqual({ denied: { refundId: 'none: denied' } });
    expect(payments.refunds).toHaveLength(0);
  });
});

describe("a stop under the step's retries", () => {
  it('plain Mastra: a refund whose reply is lost is retried: four refunds for retries: 3', async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const { run } = await suspendedRun(refundWorkflow({ payments, dbFile: dbFile(), retries: 3 }));
    const result = await run.resume({ step: 'approve', resumeData: { approved: true } });
    expect(result.status).toBe('failed');
    expect(payments.refunds).toHaveLength(4);
  });

  it('fenced: one refund, the run fails with the stop, not retried, and a later resume is refused too', async () => {
    const payments = new Payments();
    payments.loseReply = true;
    const guard = recordingGuard(new MemoryStore());
    const { run, resumeLate } = await suspendedRun(
      refundWorkflow({ payments, guard, dbFile: dbFile(), retries: 3 }),
    );
    const result = await run.resume({ step: 'approve', resumeData: { approved: true } });
    expect(result.status).toBe('failed');
    expect(payments.refunds).toHaveLength(1);
    const stop = stopErrorOf(result.status === 'failed' ? result.error : undefined);
    expect(IndeterminateOutcomeError.isInstance(stop)).toBe(true);
    payments.loseReply = false;
    const late = await resumeLate(true);
    expect(late.status).toBe('failed');
    expect(
      IndeterminateOutcomeError.isInstance(stopErrorOf(late.status === 'failed' ? late.error : undefined)),
    ).toBe(true);
    expect(payments.refunds).toHaveLength(1);
  });
});

describe('a tool aborted while it runs (run.cancel())', () => {
  /** Resume the run, and cancel it while the refund is in flight (the body gives up on abort). */
  async function cancelDuringRefund(workflow: ReturnType<typeof refundWorkflow>) {
    const { run } = await suspendedRun(workflow);
    const resumed = run.resume({ step: 'approve', resumeData: { approved: true } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await run.cancel();
    return resumed;
  }

  it('plain Mastra records the aborted tool as a success', async () => {
    const payments = new Payments();
    payments.delayMs = 300;
    const result = await cancelDuringRefund(refundWorkflow({ payments, dbFile: dbFile() }));
    expect(result.status).toBe('canceled');
    expect(result.steps.refund_payment).toMatchObject({ status: 'success', output: { refundId: 'aborted' } });
  });

  it('fenced: the step fails with the stop, and the record is indeterminate, not a success', async () => {
    const payments = new Payments();
    payments.delayMs = 300;
    const store = new MemoryStore();
    const result = await cancelDuringRefund(
      refundWorkflow({ payments, guard: recordingGuard(store), dbFile: dbFile() }),
    );
    expect(result.status).toBe('canceled');
    expect(result.steps.refund_payment?.status).toBe('failed');
    const stop = stopErrorOf(result.steps.refund_payment);
    expect(IndeterminateOutcomeError.isInstance(stop) && stop.reasonType).toBe('AbortError');
    // The caller is answered at once; the claim is held until the body settles, then marked.
    const key = (stop as IndeterminateOutcomeError).key;
    let record = await store.get({ tenant: 'shop', key });
    for (let waited = 0; record?.state === 'in_progress' && waited < 2000; waited += 20) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      record = await store.get({ tenant: 'shop', key });
    }
    expect(record?.state).toBe('indeterminate');
    expect(payments.refunds).toHaveLength(0);
  });
});

describe('a step that suspends twice (fenceStep binds each suspension)', () => {
  it('each resume is answered with its own data, as without toolfence', async () => {
    const twoQuestions = createStep({
      id: 'two-questions',
      inputSchema: z.object({}),
      outputSchema: z.object({ answers: z.array(z.string()) }),
      resumeSchema: z.object({ answer: z.string() }),
      suspendSchema: z.object({ question: z.string() }),
      execute: async ({ resumeData, suspendData, suspend }) => {
        if (resumeData === undefined) return suspend({ question: 'first' });
        if (suspendData?.question === 'first')
          return suspend({ question: `second, after ${resumeData.answer}` });
        return { answers: [suspendData?.question ?? '', resumeData.answer] };
      },
    });
    const guard = recordingGuard(new MemoryStore());
    const workflow = createWorkflow({ id: 'questions', inputSchema: z.object({}), outputSchema: z.any() })
      .then(fenceStep(twoQuestions, { guard }))
      .commit();
    const mastra = new Mastra({
      workflows: { workflow },
      storage: new LibSQLStore({ id: 'snapshots', url: `file:${dbFile()}` }),
      logger: false,
    });
    const run = await mastra.getWorkflow('workflow').createRun();
    expect((await run.start({ inputData: {} })).status).toBe('suspended');
    expect((await run.resume({ step: 'two-questions', resumeData: { answer: 'a' } })).status).toBe(
      'suspended',
    );
    const done = await run.resume({ step: 'two-questions', resumeData: { answer: 'b' } });
    expect(done.status === 'success' && done.result).toEqual({ answers: ['second, after a', 'b'] });
  });
});
