// docs/operations.md, "walk-through-a-refund-whose-answer-was-l": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region walk-through-a-refund-whose-answer-was-l
import { Idempotency } from '@toolfence/core';

const policies = {
  refund_order: {
    kind: Idempotency.EFFECTFUL,
    // Opt-in, see "Descriptions" below: the one place where argument-derived text is stored.
    describe: (args: { orderId: string; amount: number }) => `refund ${args.orderId} EUR ${args.amount}`,
  },
};
// #endregion walk-through-a-refund-whose-answer-was-l

export { policies };
