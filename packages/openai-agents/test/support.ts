// Shared pieces of the OpenAI Agents tests: the SDK's own ScriptedModel (a `Model`, offline), a
// refund tool that counts what it paid, and the guard's events.
import { Agent, setTracingDisabled, tool } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { Guard, type GuardEvent, Idempotency, type IdempotencyStore } from '@toolfence/core';
import { z } from 'zod';

// No trace exporter: the tests run offline.
setTracingDisabled(true);

export const refundPolicy = {
  refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] as const },
};

/** One tool call the scripted model makes. */
export interface Call {
  readonly name: string;
  readonly args: Record<string, unknown>;
  readonly id: string;
}

/** A ScriptedModel answering each turn with the given calls, or a final text. */
export function scriptedModel(turns: ReadonlyArray<ReadonlyArray<Call> | string>): ScriptedModel {
  return new ScriptedModel(
    turns.map((turn) =>
      typeof turn === 'string'
        ? [assistantMessage(turn)]
        : turn.map((call) => functionCall(call.name, call.args, { callId: call.id })),
    ),
  );
}

export const refundCall = (id: string, orderId = 'A-100') => ({
  name: 'refund_payment',
  args: { orderId, amountCents: 2250 },
  id,
});

/** A payments provider that counts refunds; `loseReply` makes the next refund land, then throw. */
export class Payments {
  readonly refunds: string[] = [];
  loseReply = false;

  async refund(orderId: string, amountCents: number): Promise<{ refundId: string }> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    this.refunds.push(`${orderId} ${amountCents}`);
    if (this.loseReply) {
      throw Object.assign(new Error(`read ECONNRESET (refund ${orderId})`), { code: 'ECONNRESET' });
    }
    return { refundId: `re_${this.refunds.length}` };
  }
}

export function refundTool(
  payments: Payments,
  extra: { needsApproval?: boolean; errorFunction?: null } = {},
) {
  return tool({
    name: 'refund_payment',
    description: 'Refund (part of) an order.',
    parameters: z.object({ orderId: z.string(), amountCents: z.number().int() }),
    execute: ({ orderId, amountCents }) => payments.refund(orderId, amountCents),
    ...extra,
  });
}

export function lookupTool() {
  return tool({
    name: 'lookup_order',
    description: 'Look up an order.',
    parameters: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ orderId, status: 'delivered, damaged' }),
  });
}

export function recordingGuard(store: IdempotencyStore, events: GuardEvent[] = []) {
  return new Guard({ store, tenant: 'shop', onEvent: (event) => events.push(event) });
}

export function agentWith(model: ScriptedModel, tools: Agent['tools'], name = 'support') {
  return new Agent({ name, instructions: 'Help the customer.', model, tools });
}
