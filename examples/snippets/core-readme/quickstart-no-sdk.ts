// packages/core/README.md, "quickstart-no-sdk": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

import { payments } from '../support.js';
// #region quickstart-no-sdk
import { currentToolCall, Guard, Idempotency, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';

const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });

try {
  const receipt = await guard.run(
    {
      tool: 'refund',
      arguments: { orderId: 'A-100', amount: 30 },
      runId: 'run-7', // the conversation / job: part of the key with the default scope 'run'
      callId: 'call-1',
      policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
    },
    // Runs at most once per key; pass the key to a provider that dedupes (Idempotency-Key).
    async () =>
      payments.refund(
        { orderId: 'A-100', amount: 30 },
        { idempotencyKey: currentToolCall()!.idempotencyKey },
      ),
  );
  console.log(receipt.refundId);
} catch (error) {
  if (!IndeterminateOutcomeError.isInstance(error)) throw error;
  // It may have happened: check the payments provider, then settle the record.
  await guard.resolve(error.key, { outcome: { refunded: true } }); // or { released: true }
}
// #endregion quickstart-no-sdk
