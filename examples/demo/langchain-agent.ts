// The LangChain agent of the demo, built as an application builds it: `createAgent` with
// lookup_order (read-only), update_address (idempotent upsert), refund_payment (effectful) and an
// approval tool that calls LangGraph's interrupt(). Guarding it is one middleware:
// `toolfenceMiddleware({ guard, policies })`. The model is LangChain's own scripted fakeModel().
import { tool } from '@langchain/core/tools';
import { interrupt, MemorySaver } from '@langchain/langgraph';
import type { Guard } from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { AIMessage, createAgent, fakeModel } from 'langchain';
import { z } from 'zod';
import { policies, type Script } from './policies.js';
import type { Provider } from './provider.js';

const orderSchema = z.object({ orderId: z.string().describe('Order number, e.g. A-100') });
const addressSchema = z.object({ orderId: z.string(), address: z.string() });
const refundSchema = z.object({ orderId: z.string(), amountCents: z.number().int() });

export function langchainTools(provider: Provider) {
  return [
    tool(async ({ orderId }) => JSON.stringify(await provider.lookupOrder(orderId)), {
      name: 'lookup_order',
      description: 'Look up an order.',
      schema: orderSchema,
    }),
    tool(
      async ({ orderId, address }) => JSON.stringify(await provider.setShippingAddress(orderId, address)),
      { name: 'update_address', description: 'Set the shipping address of an order.', schema: addressSchema },
    ),
    tool(async ({ orderId, amountCents }) => JSON.stringify(await provider.refund(orderId, amountCents)), {
      name: 'refund_payment',
      description: 'Refund (part of) an order.',
      schema: refundSchema,
    }),
    // Asks a human before going on: LangGraph interrupt(), resumed with Command({ resume }).
    tool(async ({ question }) => `Approved: ${interrupt({ question })}`, {
      name: 'ask_approval',
      description: 'Ask a human supervisor to approve something.',
      schema: z.object({ question: z.string() }),
    }),
  ];
}

/**
 * A LangChain agent. `guard` given: guarded by toolfenceMiddleware; otherwise as it was.
 * `version: 'v1'` runs a step's tool calls together in one ToolNode: the mode in which a resume
 * after interrupt() runs every call of the step again.
 */
export function langchainAgent(provider: Provider, script: Script, guard?: Guard) {
  let model = fakeModel();
  for (const step of script) {
    model =
      typeof step === 'string'
        ? model.respond(new AIMessage(step))
        : model.respondWithTools(step.map((call) => ({ name: call.name, args: call.args, id: call.id })));
  }
  return createAgent({
    model,
    tools: langchainTools(provider),
    middleware: guard === undefined ? [] : [toolfenceMiddleware({ guard, policies })],
    checkpointer: new MemorySaver(),
    version: 'v1',
  });
}
