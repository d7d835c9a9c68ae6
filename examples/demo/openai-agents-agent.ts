// The OpenAI Agents agent of the demo, built as an application builds it: an `Agent` with
// lookup_order (read-only), update_address (idempotent upsert) and refund_payment (effectful),
// run with `run(agent, input)`. Guarding it is one call: `fenceAgent(agent, { guard, policies,
// runId })`. The model is the SDK's own ScriptedModel answering from the script.
import { Agent, run, setTracingDisabled, tool } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import type { Guard } from '@toolfence/core';
import { fenceAgent } from '@toolfence/openai-agents';
import { z } from 'zod';
import { policies, type Script } from './policies.js';
import type { Provider } from './provider.js';

// Offline: no trace exporter.
setTracingDisabled(true);

export function openaiAgentsTools(provider: Provider) {
  return [
    tool({
      name: 'lookup_order',
      description: 'Look up an order.',
      parameters: z.object({ orderId: z.string().describe('Order number, e.g. A-100') }),
      execute: ({ orderId }) => provider.lookupOrder(orderId),
    }),
    tool({
      name: 'update_address',
      description: 'Set the shipping address of an order.',
      parameters: z.object({ orderId: z.string(), address: z.string() }),
      execute: ({ orderId, address }) => provider.setShippingAddress(orderId, address),
    }),
    tool({
      name: 'refund_payment',
      description: 'Refund (part of) an order.',
      parameters: z.object({ orderId: z.string(), amountCents: z.number().int() }),
      execute: ({ orderId, amountCents }) => provider.refund(orderId, amountCents),
    }),
  ];
}

/**
 * Run an OpenAI Agents agent on the script. `guard` given: the agent is guarded by fenceAgent (run
 * id = the conversation); an unknown outcome rejects `run()` (stopErrorOf finds the error).
 */
export async function runOpenAIAgent(provider: Provider, script: Script, runId: string, guard?: Guard) {
  const agent = new Agent({
    name: 'support',
    instructions: 'Help the customer with their order.',
    model: scriptedOpenAIModel(script),
    tools: openaiAgentsTools(provider),
  });
  const guarded = guard === undefined ? agent : fenceAgent(agent, { guard, policies, runId });
  return run(guarded, 'Order A-100 arrived damaged. Refund the customer and fix the address.', {
    maxTurns: 6,
  });
}

/** The SDK's own scripted model, answering with the script one turn at a time. */
export function scriptedOpenAIModel(script: Script): ScriptedModel {
  return new ScriptedModel(
    script.map((turn) =>
      typeof turn === 'string'
        ? [assistantMessage(turn)]
        : turn.map((call) => functionCall(call.name, call.args, { callId: call.id })),
    ),
  );
}
