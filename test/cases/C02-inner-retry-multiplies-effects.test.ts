// C02 — an outer retry around a failing effectful tool multiplies its effect
// (docs/field-cases.md, C02).
//
// A tool increments an effect counter and then throws ECONNRESET (the request reached the
// provider, the answer was lost). Host code retries the whole call: 3 attempts in all.
// EFFECTFUL: the counter is 1, every attempt gets IndeterminateOutcomeError, the body is not
// entered again. IDEMPOTENT: the body may run 3 times, and every run receives the same
// idempotencyKey, so a provider that dedupes by key applies it once.
import {
  currentToolCall,
  Guard,
  Idempotency,
  type IdempotencyPolicy,
  IndeterminateOutcomeError,
  MemoryStore,
} from '@toolfence/core';
import { fenceTools, indeterminateErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../support/scripted-model.js';

const ATTEMPTS = 3;

/** A payment provider that dedupes by idempotency key, behind a connection that drops every answer. */
function flakyProvider() {
  const keysSeen: string[] = [];
  const applied = new Set<string>();
  let bodyRuns = 0;
  const charge = async (args: { orderId: string; cents: number }): Promise<{ charged: string }> => {
    bodyRuns++;
    const key = currentToolCall()?.idempotencyKey ?? `no-key-${bodyRuns}`;
    keysSeen.push(key);
    applied.add(key); // the effect lands (once per key) ...
    void args;
    throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }); // ... the answer is lost
  };
  return { charge, keysSeen, applied, bodyRuns: () => bodyRuns };
}

/** The host's retry: run `attempt` up to ATTEMPTS times, collecting every error. */
async function retry(attempt: () => Promise<unknown>): Promise<unknown[]> {
  const errors: unknown[] = [];
  for (let index = 0; index < ATTEMPTS; index++) {
    try {
      await attempt();
      break;
    } catch (error) {
      errors.push(error);
    }
  }
  return errors;
}

describe('C02 at the guard', () => {
  const call = (policy: IdempotencyPolicy) => ({
    tool: 'charge',
    arguments: { orderId: 'A-100', cents: 2500 },
    runId: 'checkout-1',
    policy,
  });

  it('EFFECTFUL: the effect happens once and every attempt gets IndeterminateOutcomeError', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const provider = flakyProvider();
    const policy = { kind: Idempotency.EFFECTFUL };
    const errors = await retry(() =>
      guard.run(call(policy), () => provider.charge({ orderId: 'A-100', cents: 2500 })),
    );
    expect(provider.bodyRuns()).toBe(1);
    expect(errors).toHaveLength(ATTEMPTS);
    for (const error of errors) {
      expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
      expect((error as IndeterminateOutcomeError).reasonType).toBe('ECONNRESET');
      expect((error as IndeterminateOutcomeError).key).toBe(provider.keysSeen[0]);
    }
  });

  it('IDEMPOTENT: the body runs on every attempt, always with the same idempotencyKey', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const provider = flakyProvider();
    const policy = { kind: Idempotency.IDEMPOTENT };
    const errors = await retry(() =>
      guard.run(call(policy), () => provider.charge({ orderId: 'A-100', cents: 2500 })),
    );
    expect(provider.bodyRuns()).toBe(ATTEMPTS);
    expect(errors.map((error) => (error as { code?: unknown }).code)).toEqual([
      'ECONNRESET',
      'ECONNRESET',
      'ECONNRESET',
    ]);
    expect(new Set(provider.keysSeen).size).toBe(1);
    expect(provider.keysSeen[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(provider.applied.size).toBe(1);
  });
});

describe('C02 through the AI SDK adapter', () => {
  function chargeTools(provider: ReturnType<typeof flakyProvider>) {
    return {
      charge: tool({
        description: 'Charge an order',
        inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
        execute: async (args) => provider.charge(args),
      }),
    };
  }
  const modelScript = () =>
    scriptedModel([[{ toolName: 'charge', input: { orderId: 'A-100', cents: 2500 } }], 'Charged.']);

  it('EFFECTFUL: every retried run rejects with IndeterminateOutcomeError and the tool ran once', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const provider = flakyProvider();
    const tools = chargeTools(provider);
    const models: Array<ReturnType<typeof modelScript>> = [];
    const fenced = fenceTools(tools, {
      guard,
      policies: { charge: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
      runId: 'checkout-1',
    });
    const errors = await retry(async () => {
      const model = modelScript();
      models.push(model);
      // The rejecting mode: generateText rejects with the typed error.
      await generateText({
        model,
        prompt: 'Charge order A-100',
        tools: fenced,
        stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
      });
    });
    expect(provider.bodyRuns()).toBe(1);
    expect(errors).toHaveLength(ATTEMPTS);
    expect(errors.every((error) => IndeterminateOutcomeError.isInstance(error))).toBe(true);
    expect(new Set(errors.map((error) => (error as IndeterminateOutcomeError).key)).size).toBe(1);
    // No run went on to a second model step.
    expect(models.map((model) => model.doGenerateCalls.length)).toEqual([1, 1, 1]);
  });

  it('EFFECTFUL without the rejecting mode: each run stops with the error readable from its steps', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const provider = flakyProvider();
    const fenced = fenceTools(chargeTools(provider), {
      guard,
      policies: { charge: { kind: Idempotency.EFFECTFUL } },
      runId: 'checkout-2',
    });
    const found: unknown[] = [];
    await retry(async () => {
      const result = await generateText({
        model: modelScript(),
        prompt: 'Charge order A-100',
        tools: fenced,
        stopWhen: [stepCountIs(5), stopOnIndeterminate()],
      });
      expect(result.steps).toHaveLength(1);
      const error = indeterminateErrorOf(result);
      found.push(error);
      if (error !== undefined) throw error;
    });
    expect(provider.bodyRuns()).toBe(1);
    expect(found).toHaveLength(ATTEMPTS);
    expect(found.every((error) => IndeterminateOutcomeError.isInstance(error))).toBe(true);
  });

  it('IDEMPOTENT: the tool runs on every retried run with the same idempotencyKey', async () => {
    const guard = new Guard({ store: new MemoryStore() });
    const provider = flakyProvider();
    const fenced = fenceTools(chargeTools(provider), {
      guard,
      policies: { charge: { kind: Idempotency.IDEMPOTENT } },
      runId: 'checkout-3',
    });
    const errors = await retry(async () => {
      const result = await generateText({
        model: modelScript(),
        prompt: 'Charge order A-100',
        tools: fenced,
      });
      // An ordinary tool error: a tool-error part, as the SDK does; the host retries on it.
      const toolError = result.steps[0]?.content.find((part) => part.type === 'tool-error');
      if (toolError !== undefined) throw toolError.error;
    });
    expect(provider.bodyRuns()).toBe(ATTEMPTS);
    expect(errors.map((error) => (error as { code?: unknown }).code)).toEqual([
      'ECONNRESET',
      'ECONNRESET',
      'ECONNRESET',
    ]);
    expect(new Set(provider.keysSeen).size).toBe(1);
    expect(provider.applied.size).toBe(1);
  });
});
