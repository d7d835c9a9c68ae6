// The code blocks of README.md (npx tsx scripts/snippets.ts --write copies each region there).
import { payments } from '../support.js';

// #region without-an-sdk
import { currentToolCall, Guard, Idempotency, MemoryStore } from '@toolfence/core';

const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' }); // RedisStore, PostgresStore … across workers
const receipt = await guard.run(
  {
    tool: 'refund',
    arguments: { orderId: 'A-100', amount: 30 },
    runId: 'run-7', // the conversation or job: part of the key
    callId: 'call-1',
    policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
  },
  // Runs at most once per key; the key goes to a provider that dedupes (Idempotency-Key).
  async () =>
    payments.refund({ orderId: 'A-100', amount: 30 }, { idempotencyKey: currentToolCall()!.idempotencyKey }),
);
// #endregion without-an-sdk

console.log(receipt.refundId);
