// Row 4d: the AI SDK agent of row 4, whose refund_payment policy has a reconcile probe. The tool
// sends `currentToolCall().idempotencyKey` to the provider; the reply is lost; the probe asks the
// provider for the refund sent with that key, finds it, and the call returns it: the run goes on
// without a person (docs/reconcile.md).
import { currentToolCall, type Guard, Idempotency, type IdempotencyPolicy } from '@toolfence/core';
import { fenceTools, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';
import { aiSdkTools, scriptedAiModel } from './ai-sdk-agent.js';
import { policies, type Script } from './policies.js';
import type { Provider } from './provider.js';

/** The demo's policies, with a probe on refund_payment that asks `provider` by idempotency key. */
export function reconcilingPolicies(provider: Provider) {
  const refund: IdempotencyPolicy<{ orderId: string; amountCents: number }> = {
    kind: Idempotency.EFFECTFUL,
    reconcile: ({ idempotencyKey }) => {
      const found = provider.refundFor(idempotencyKey);
      return found === undefined
        ? { happened: false, detail: 'no refund with this key' }
        : { happened: true, outcome: found, detail: `found ${found.refundId}` };
    },
  };
  return { ...policies, refund_payment: refund };
}

/** The AI SDK agent of row 4, its refund sent with the call's idempotency key. */
export function runReconcilingAgent(provider: Provider, script: Script, runId: string, guard?: Guard) {
  const tools = {
    ...aiSdkTools(provider),
    refund_payment: tool({
      description: 'Refund (part of) an order.',
      inputSchema: z.object({ orderId: z.string(), amountCents: z.number().int() }),
      // Without toolfence there is no key: the provider cannot tell a repeat from a new refund.
      execute: ({ orderId, amountCents }) =>
        provider.refund(orderId, amountCents, '', currentToolCall()?.idempotencyKey),
    }),
  };
  return generateText({
    model: scriptedAiModel(script),
    tools:
      guard === undefined
        ? tools
        : fenceTools(tools, { guard, policies: reconcilingPolicies(provider), runId }),
    prompt: 'Order A-100 arrived damaged. Refund the customer.',
    stopWhen: guard === undefined ? stepCountIs(6) : [stepCountIs(6), stopOnIndeterminate()],
  });
}
