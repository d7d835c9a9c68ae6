// Type tests (checked by `npm run typecheck` and the packed-tarball test's fixture): a fenced
// tool has exactly the tool's own types, and policies are typed by the tool's arguments.
import type { ToolMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { type FencedTool, fenceTool, fenceTools, toolfenceMiddleware } from '@toolfence/langchain';
import { expectTypeOf } from 'vitest';
import { z } from 'zod';

const guard = new Guard({ store: new MemoryStore() });
const refundOrder = tool(async ({ orderId, cents }) => `Refunded ${cents} on ${orderId}`, {
  name: 'refund_order',
  description: 'Refund an order.',
  schema: z.object({ orderId: z.string(), cents: z.number() }),
});
const lookupOrder = tool(async ({ orderId }) => ({ orderId, status: 'shipped' as const }), {
  name: 'lookup_order',
  description: 'Look an order up.',
  schema: z.object({ orderId: z.string() }),
});

const fenced = fenceTool(refundOrder, {
  guard,
  policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
});

// invoke: the tool's own signature and result types.
expectTypeOf(fenced.invoke).toEqualTypeOf(refundOrder.invoke);
expectTypeOf(fenced.invoke({ orderId: 'A', cents: 5 })).toEqualTypeOf<Promise<string>>();
expectTypeOf(
  fenced.invoke({ type: 'tool_call', id: 'c1', name: 'refund_order', args: { orderId: 'A', cents: 5 } }),
).toEqualTypeOf<Promise<ToolMessage>>();
expectTypeOf(fenced.name).toEqualTypeOf<'refund_order'>();
expectTypeOf(fenced.schema).toEqualTypeOf(refundOrder.schema);
expectTypeOf(fenced).toExtend<typeof refundOrder>();
expectTypeOf(fenced).toEqualTypeOf<FencedTool<typeof refundOrder>>();
expectTypeOf(fenced.wrappedTool).toEqualTypeOf(refundOrder);

// keyArguments: the schema's keys only.
// @ts-expect-error 'order' is not an argument of refund_order
fenceTool(refundOrder, { guard, policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['order'] } });

// key: (args) => string gets the tool's argument type.
fenceTool(refundOrder, {
  guard,
  policy: {
    kind: Idempotency.EFFECTFUL,
    key: (args) => {
      expectTypeOf(args).toEqualTypeOf<{ orderId: string; cents: number }>();
      return `refund:${args.orderId}`;
    },
  },
});

// fenceTools: the same tuple of types back; policies keyed by the tools' names and typed by them.
const [refund, lookup] = fenceTools([refundOrder, lookupOrder], {
  guard,
  policies: {
    refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
    lookup_order: { kind: Idempotency.READ_ONLY, key: (args) => args.orderId },
  },
});
expectTypeOf(refund).toEqualTypeOf(refundOrder);
expectTypeOf(lookup).toEqualTypeOf(lookupOrder);
expectTypeOf(lookup.invoke({ orderId: 'A' })).toEqualTypeOf<
  Promise<{ orderId: string; status: 'shipped' }>
>();
fenceTools([refundOrder], {
  guard,
  // @ts-expect-error 'cents_total' is not an argument of refund_order
  policies: { refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['cents_total'] } },
});
fenceTools([refundOrder], {
  guard,
  // @ts-expect-error no tool is named refund_ordr
  policies: { refund_ordr: { kind: Idempotency.EFFECTFUL } },
});

// The middleware does not know the tools' types: any names, any string key arguments.
toolfenceMiddleware({
  guard,
  policies: { refund_order: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
});
