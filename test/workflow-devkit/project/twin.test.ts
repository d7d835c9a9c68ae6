// The twin case on Workflow DevKit's own runtime (the local world, in this process): the engine's
// queue delivers a step's message twice at once, as an at-least-once queue may, and the engine's
// step handler runs both deliveries. Without toolfence the body takes effect twice while the
// step's journal shows one attempt; with workflowStepGuard it takes effect once and both
// deliveries return its result. A stop becomes FatalError and the engine does not retry it.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { start } from 'workflow/api';
import { getWorld } from 'workflow/runtime';
import { agentEffects, fencedAgentWorkflow, plainAgentWorkflow } from './workflows/agent-tools.js';
import { checkout, payments } from './workflows/checkout.js';
import { failingWorkflow, fencedWorkflow, ledger, plainWorkflow } from './workflows/twin-steps.js';

type Queue = (name: string, message: unknown, options?: { idempotencyKey?: string }) => Promise<unknown>;
let restoreQueue: (() => void) | undefined;

/** Every step message is delivered twice, concurrently (the queue's own dedupe key dropped). */
function deliverStepsTwice(): void {
  const world = getWorld() as unknown as { queue: Queue };
  const original = world.queue;
  world.queue = async (name, message, options) => {
    if (!name.startsWith('__wkf_step_')) return original.call(world, name, message, options);
    const { idempotencyKey: _dropped, ...rest } = options ?? {};
    const first = await original.call(world, name, message, rest);
    await original.call(world, name, message, rest);
    return first;
  };
  restoreQueue = () => {
    world.queue = original;
  };
}

async function stepsOf(runId: string) {
  const world = getWorld();
  const steps = await world.steps.list({ runId, resolveData: 'none' } as never);
  const events = await world.events.list({ runId, pagination: { limit: 200 }, resolveData: 'none' } as never);
  return {
    steps: steps.data.map((step) => ({ status: step.status, attempt: step.attempt })),
    started: events.data.filter((event) => event.eventType === 'step_started').length,
  };
}

/** Twin deliveries settle on their own after the run returns: wait until both have answered. */
async function answers(count: number): Promise<unknown[]> {
  for (let waited = 0; ledger.answers.length < count && waited < 10_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return ledger.answers;
}

beforeEach(() => {
  ledger.effects.length = 0;
  ledger.answers.length = 0;
  deliverStepsTwice();
});
afterEach(() => restoreQueue?.());

describe('a Workflow DevKit step delivered twice at once', () => {
  it('without toolfence: the body takes effect twice, and the journal shows one attempt', async () => {
    const run = await start(plainWorkflow, [500]);
    await run.returnValue;
    expect(await answers(2)).toHaveLength(2);
    expect(ledger.effects).toHaveLength(2);
    expect(new Set(ledger.effects).size).toBe(1); // the same step id, twice
    const journal = await stepsOf(run.runId);
    expect(journal.steps).toEqual([{ status: 'completed', attempt: 1 }]);
    expect(journal.started).toBe(2);
  });

  it('with workflowStepGuard: one effect, and both deliveries return its result', async () => {
    const run = await start(fencedWorkflow, [700]);
    const value = await run.returnValue;
    const both = await answers(2);
    expect(ledger.effects).toHaveLength(1);
    expect(both).toEqual([value, value]);
    expect(value).toEqual({ paid: `${ledger.effects[0]}:1` });
    expect((await stepsOf(run.runId)).steps).toEqual([{ status: 'completed', attempt: 1 }]);
  });

  it('a stop fails the step with FatalError: no retry, and the body ran once', async () => {
    const run = await start(failingWorkflow, [900]);
    const failure = await run.returnValue.then(
      () => new Error('expected the run to fail'),
      (error: unknown) => error,
    );
    // The twin delivery stops too (the record is indeterminate), without entering the body.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ledger.effects).toHaveLength(1);
    const journal = await stepsOf(run.runId);
    expect(journal.steps).toEqual([{ status: 'failed', attempt: 1 }]);
    // The run fails with the stop's own words (the engine keeps a step's error as plain data).
    expect(String((failure as Error).cause ?? failure)).toMatch(/The outcome of tool .* is unknown/);
  });

  it("the docs' checkout example, on the engine: one charge for a twin-delivered step", async () => {
    const before = payments.charges.length;
    const run = await start(checkout, ['A-100', 1250]);
    const value = await run.returnValue;
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The step bundle's copy of the example module keeps its charges on globalThis, as this one.
    expect(payments.charges.length - before).toBe(1);
    expect(value).toEqual({ orderId: 'A-100', chargeId: payments.charges.at(-1)?.id });
  });
});

describe('a DurableAgent tool whose step is delivered twice at once', () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 800));

  it('without toolfence: the tool refunds twice', async () => {
    agentEffects.length = 0;
    const run = await start(plainAgentWorkflow, []);
    await run.returnValue;
    await settle();
    expect(agentEffects).toEqual(['plain:A-100', 'plain:A-100']);
  });

  it('with workflowStepGuard in the tool step: one refund, and the agent finishes', async () => {
    agentEffects.length = 0;
    const run = await start(fencedAgentWorkflow, []);
    // user, assistant (tool call), tool result, assistant (text)
    expect(await run.returnValue).toBe(4);
    await settle();
    expect(agentEffects).toEqual(['fenced:A-100']);
  });
});
