// docs/reconcile.md, "policy": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { currentToolCall, type Guard, Idempotency, type IdempotencyPolicy } from '@toolfence/core';

interface Charge {
  readonly id: string;
}
declare const payments: {
  charge(
    order: { orderId: string; amountCents: number },
    options: { idempotencyKey: string },
  ): Promise<Charge>;
  findByIdempotencyKey(key: string, options: { signal: AbortSignal }): Promise<Charge | undefined>;
};
declare const guard: Guard;
declare const orderId: string;
declare const runId: string;

// #region policy
const charge: IdempotencyPolicy = {
  kind: Idempotency.EFFECTFUL,
  // Ask the provider whether the charge of this call exists.
  reconcile: async ({ idempotencyKey, signal }) => {
    const found = await payments.findByIdempotencyKey(idempotencyKey, { signal });
    if (found === undefined) return { happened: false, detail: 'no charge for this key' };
    return { happened: true, outcome: { chargeId: found.id }, detail: `found ${found.id}` };
  },
};

await guard.run({ tool: 'charge', arguments: { orderId }, runId, policy: charge }, async () => {
  // The key the probe looks up: pass it to the provider.
  const { idempotencyKey } = currentToolCall()!;
  const created = await payments.charge({ orderId, amountCents: 3000 }, { idempotencyKey });
  return { chargeId: created.id };
});
// #endregion policy
