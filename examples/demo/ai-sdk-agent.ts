// The AI SDK agent of the demo, built as an application builds it: `generateText` with
// lookup_order (read-only), update_address (idempotent upsert) and refund_payment (effectful).
// Guarding it is one call: `fenceTools(tools, { guard, policies, runId })`. The model is the AI
// SDK's own MockLanguageModelV3 answering from a script.
import type { Guard } from '@toolfence/core';
import { fenceTools, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { policies, type Script } from './policies.js';
import type { Provider } from './provider.js';

const orderSchema = z.object({ orderId: z.string().describe('Order number, e.g. A-100') });
const addressSchema = z.object({ orderId: z.string(), address: z.string() });
const refundSchema = z.object({ orderId: z.string(), amountCents: z.number().int() });

export function aiSdkTools(provider: Provider) {
  return {
    lookup_order: tool({
      description: 'Look up an order.',
      inputSchema: orderSchema,
      execute: ({ orderId }) => provider.lookupOrder(orderId),
    }),
    update_address: tool({
      description: 'Set the shipping address of an order.',
      inputSchema: addressSchema,
      execute: ({ orderId, address }) => provider.setShippingAddress(orderId, address),
    }),
    refund_payment: tool({
      description: 'Refund (part of) an order.',
      inputSchema: refundSchema,
      execute: ({ orderId, amountCents }) => provider.refund(orderId, amountCents),
    }),
  };
}

/**
 * Run an AI SDK agent: `generateText` with the scripted model. `guard` given: the tools are
 * guarded by fenceTools (run id = the conversation), and the run stops after an indeterminate
 * outcome; otherwise as it was.
 */
export function runAiSdkAgent(provider: Provider, script: Script, runId: string, guard?: Guard) {
  const tools = aiSdkTools(provider);
  return generateText({
    model: scriptedAiModel(script),
    tools: guard === undefined ? tools : fenceTools(tools, { guard, policies, runId }),
    prompt: 'Order A-100 arrived damaged. Refund the customer and fix the address.',
    stopWhen: guard === undefined ? stepCountIs(6) : [stepCountIs(6), stopOnIndeterminate()],
  });
}

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** The AI SDK's own mock model, answering with the script one step at a time. */
export function scriptedAiModel(script: Script): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const answer = script[step++] ?? 'Done.';
      if (typeof answer === 'string') {
        return {
          content: [{ type: 'text' as const, text: answer }],
          finishReason: { unified: 'stop' as const, raw: undefined },
          usage,
          warnings: [],
        };
      }
      return {
        content: answer.map((call) => ({
          type: 'tool-call' as const,
          toolCallId: call.id,
          toolName: call.name,
          input: JSON.stringify(call.args),
        })),
        finishReason: { unified: 'tool-calls' as const, raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
}
