// Type tests (checked by `npm run typecheck`): fenced tools keep their types, and policies are
// typed by the tools, as with the LangChain and AI SDK adapters (issue #27 item 9): a misspelt
// tool name or `keyArguments` entry is a compile error.
import { Agent, type FunctionTool, tool } from '@openai/agents-core';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import {
  fenceAgent,
  fenceTool,
  fenceTools,
  type NamedFunctionTool,
  type ToolArguments,
} from '@toolfence/openai-agents';
import { expectTypeOf } from 'vitest';
import { z } from 'zod';

const guard = new Guard({ store: new MemoryStore() });
const refundPayment = tool({
  name: 'refund_payment',
  description: 'Refund (part of) an order.',
  parameters: z.object({ orderId: z.string(), amountCents: z.number().int() }),
  execute: async ({ orderId, amountCents }) => {
    expectTypeOf(orderId).toEqualTypeOf<string>();
    return `refunded ${amountCents} on ${orderId}`;
  },
});
const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Look an order up.',
  parameters: z.object({ orderId: z.string() }),
  execute: async ({ orderId }) => ({ orderId, status: 'delivered' }),
});

// tool() keeps the literal name (the overload this package adds); the rest is the SDK's type.
expectTypeOf(refundPayment.name).toEqualTypeOf<'refund_payment'>();
expectTypeOf(refundPayment).toExtend<FunctionTool<unknown, any, string>>();
expectTypeOf(refundPayment).toEqualTypeOf<
  NamedFunctionTool<
    'refund_payment',
    unknown,
    z.ZodObject<{ orderId: z.ZodString; amountCents: z.ZodNumber }, z.core.$strip>,
    string
  >
>();
expectTypeOf<ToolArguments<typeof refundPayment>>().toEqualTypeOf<{ orderId: string; amountCents: number }>();
// Without a name (the execute function's name is used) tool() is the SDK's as it was.
function lookupStock({ sku }: { sku: string }) {
  return sku;
}
expectTypeOf(
  tool({ description: 'Stock.', parameters: z.object({ sku: z.string() }), execute: lookupStock }).name,
).toEqualTypeOf<string>();

// fenceTool: the tool's own type back; the policy typed by its arguments.
const fenced = fenceTool(refundPayment, {
  guard,
  policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
  runId: 'r',
});
expectTypeOf(fenced).toEqualTypeOf(refundPayment);
fenceTool(refundPayment, {
  guard,
  // @ts-expect-error 'order' is not an argument of refund_payment
  policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['order'] },
  runId: 'r',
});
fenceTool(refundPayment, {
  guard,
  policy: {
    kind: Idempotency.EFFECTFUL,
    key: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ orderId: string; amountCents: number }>();
      return `refund:${args.orderId}`;
    },
  },
  runId: 'r',
});

// fenceTools: the same tuple of types back; policies keyed by the tools' names and typed by them.
const [refund, lookup] = fenceTools([refundPayment, lookupOrder], {
  guard,
  policies: {
    refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId', 'amountCents'] },
    lookup_order: { kind: Idempotency.READ_ONLY, key: (args) => args.orderId },
  },
  runId: 'r',
});
expectTypeOf(refund).toEqualTypeOf(refundPayment);
expectTypeOf(lookup).toEqualTypeOf(lookupOrder);
fenceTools([refundPayment], {
  guard,
  // @ts-expect-error 'cents' is not an argument of refund_payment
  policies: { refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['cents'] } },
  runId: 'r',
});
fenceTools([refundPayment, lookupOrder], {
  guard,
  // @ts-expect-error no tool is named refund_paymnet
  policies: { refund_paymnet: { kind: Idempotency.EFFECTFUL } },
  runId: 'r',
});

// A tool whose name is only known as `string` (computed): any name compiles, set-up checks it.
const computed: FunctionTool<unknown, any, string> = refundPayment;
fenceTools([computed], { guard, policies: { anything: { kind: Idempotency.EFFECTFUL } }, runId: 'r' });

// fenceAgent: an Agent's type does not list its tools, so its table is checked at set-up.
const agent = new Agent({ name: 'support', tools: [refundPayment, lookupOrder] });
expectTypeOf(
  fenceAgent(agent, { guard, policies: { refund_payment: { kind: Idempotency.EFFECTFUL } }, runId: 'r' }),
).toEqualTypeOf(agent);
