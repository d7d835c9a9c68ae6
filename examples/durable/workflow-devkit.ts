// A Workflow DevKit step whose effect is guarded: a checkout workflow charges a card once, however
// often the engine starts the step (a retry, a duplicate delivery of its message). Copy it into
// your app's workflows/ folder; the workflow compiler turns the directives into steps.
// Type-checked and run on the engine by test/workflow-devkit/run.sh (docs/durable-steps.md).
// #region recipe
import { Guard, MemoryStore } from '@toolfence/core';
import { workflowStepGuard } from '@toolfence/durable';
import { FatalError, getStepMetadata, getWorkflowMetadata } from 'workflow';

// One store for every deployment of the workflow: RedisStore or PostgresStore from
// @toolfence/stores. A MemoryStore guards the deliveries that reach this one process.
const guard = new Guard({ store: new MemoryStore() });
const fenced = workflowStepGuard({ guard, getStepMetadata, getWorkflowMetadata, FatalError });

export interface Charge {
  readonly id: string;
  readonly orderId: string;
  readonly cents: number;
}

// A stand-in for the payment provider. It keeps every charge it made on globalThis, where the
// test reads them (the engine loads the step bundle apart from the test's modules).
const shared = globalThis as { exampleCharges?: Charge[] };
shared.exampleCharges ??= [];

export const payments = {
  charges: shared.exampleCharges,
  async charge(orderId: string, cents: number, idempotencyKey: string): Promise<Charge> {
    await new Promise((resolve) => setTimeout(resolve, 200)); // the provider's round trip
    const charge = { id: `ch_${idempotencyKey.slice(0, 12)}`, orderId, cents };
    payments.charges.push(charge);
    return charge;
  },
};

export async function chargeCard(orderId: string, cents: number): Promise<Charge> {
  'use step';
  // The key is the engine's run id and step id; the provider gets toolfence's key as well.
  return fenced({ arguments: { orderId, cents } }, ({ idempotencyKey }) =>
    payments.charge(orderId, cents, idempotencyKey),
  );
}

export async function checkout(orderId: string, cents: number) {
  'use workflow';
  const charge = await chargeCard(orderId, cents);
  return { orderId, chargeId: charge.id };
}
// #endregion recipe
