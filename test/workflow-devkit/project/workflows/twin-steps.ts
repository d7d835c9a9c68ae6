// Steps for twin.test.ts: the same effect with and without toolfence, and a body that fails.
// The step bundle is imported by the engine apart from the test's own modules, so what the test
// reads (effects, answers) is kept on globalThis.
import { Guard, MemoryStore } from '@toolfence/core';
import { workflowStepGuard } from '@toolfence/durable';
import { FatalError, getStepMetadata, getWorkflowMetadata } from 'workflow';

export interface Ledger {
  /** One entry per time a body took effect: `<label>:<stepId>`. */
  effects: string[];
  /** One entry per time a step function returned: its result. */
  answers: unknown[];
}

const shared = globalThis as { twinLedger?: Ledger };
shared.twinLedger ??= { effects: [], answers: [] };
export const ledger: Ledger = shared.twinLedger;

const store = new MemoryStore();

async function effect(label: string): Promise<{ paid: string }> {
  const { stepId } = getStepMetadata();
  ledger.effects.push(`${label}:${stepId}`);
  await new Promise((resolve) => setTimeout(resolve, 300));
  return { paid: `${label}:${stepId}:${ledger.effects.length}` };
}

// A guard per delivery: two workers sharing one store, not one process's in-flight coalescing.
function fencedByAWorker() {
  return workflowStepGuard({ guard: new Guard({ store }), getStepMetadata, getWorkflowMetadata, FatalError });
}

export async function payPlain(cents: number) {
  'use step';
  const answer = await effect(`plain-${cents}`);
  ledger.answers.push(answer);
  return answer;
}

export async function payFenced(cents: number) {
  'use step';
  const answer = await fencedByAWorker()({ arguments: { cents } }, () => effect(`fenced-${cents}`));
  ledger.answers.push(answer);
  return answer;
}

export async function payAndFail(cents: number) {
  'use step';
  return fencedByAWorker()({ arguments: { cents } }, async () => {
    await effect(`failing-${cents}`);
    throw new Error('the provider closed the connection'); // did the charge land? nobody knows
  });
}

export async function plainWorkflow(cents: number) {
  'use workflow';
  return await payPlain(cents);
}

export async function fencedWorkflow(cents: number) {
  'use workflow';
  return await payFenced(cents);
}

export async function failingWorkflow(cents: number) {
  'use workflow';
  return await payAndFail(cents);
}
