// docs/approvals.md, "using-it": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { ApprovalRequiredError, Guard, Idempotency, MemoryStore } from '@toolfence/core';

const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
const args = { orderId: 'A-100', amount: 30 };
const runId = 'run-1';
const body = async () => ({ refunded: 30 });

// #region using-it
const refund = { kind: Idempotency.EFFECTFUL, approval: 'required' } as const;

try {
  await guard.run({ tool: 'refund', arguments: args, runId, policy: refund }, body);
} catch (error) {
  if (ApprovalRequiredError.isInstance(error)) {
    // Nothing ran. The request is listed: guard.approvals()
  }
}

// The operator, after checking (the same call shape as run: tool, arguments, runId, tenant):
await guard.approve(
  { tool: 'refund', arguments: args, runId, policy: refund },
  { by: 'ops@example.com', reason: 'checked' },
);
// Run the call again (a resume, a replay): it runs once; every repeat replays its outcome.
// #endregion using-it
