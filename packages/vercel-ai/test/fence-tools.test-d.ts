// Type tests (checked by `npm run typecheck`, by test/vercel-ai-v7/run.sh against AI SDK 7, and
// by the packed-tarball test's fixture): fenced tools keep their types; policies are typed by
// each tool's input schema.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceTools } from '@toolfence/vercel-ai';
import { type InferToolInput, type InferToolOutput, tool } from 'ai';
import { expectTypeOf } from 'vitest';
import { z } from 'zod';

const guard = new Guard({ store: new MemoryStore() });
const tools = {
  refundOrder: tool({
    inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
    execute: async ({ orderId }) => ({ refunded: orderId }),
  }),
  lookup: tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => q.length }),
};

const fenced = fenceTools(tools, {
  guard,
  policies: { refundOrder: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
  runId: 'r',
});
expectTypeOf(fenced).toEqualTypeOf(tools);
expectTypeOf<InferToolInput<typeof fenced.refundOrder>>().toEqualTypeOf<{ orderId: string; cents: number }>();
expectTypeOf<InferToolOutput<typeof fenced.refundOrder>>().toEqualTypeOf<{ refunded: string }>();

fenceTools(tools, {
  guard,
  // @ts-expect-error 'order' is not an input of refundOrder
  policies: { refundOrder: { kind: Idempotency.EFFECTFUL, keyArguments: ['order'] } },
});
fenceTools(tools, {
  guard,
  // @ts-expect-error no tool is named refund
  policies: { refund: { kind: Idempotency.EFFECTFUL } },
});
fenceTools(tools, {
  guard,
  policies: {
    refundOrder: {
      kind: Idempotency.EFFECTFUL,
      key: (input) => {
        expectTypeOf(input).toEqualTypeOf<{ orderId: string; cents: number }>();
        return `refund:${input.orderId}`;
      },
    },
    lookup: { kind: Idempotency.READ_ONLY, key: (input) => input.q },
  },
});
