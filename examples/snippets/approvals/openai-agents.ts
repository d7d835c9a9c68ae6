// docs/approvals.md, "openai-agents": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { Agent, RunToolApprovalItem } from '@openai/agents';
import { redis } from '../support.js';

declare const supportAgent: Agent<{ ticketId: string }>;
declare const session: { userId: string };
declare function decisionOf(item: RunToolApprovalItem): 'approve' | 'reject';

// #region openai-agents
import { Guard, Idempotency } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { fenceAgent, recordApprovals } from '@toolfence/openai-agents';
import { run } from '@openai/agents';

const guard = new Guard({ store: new RedisStore({ client: redis }) });
const agent = fenceAgent(supportAgent, {
  guard,
  policies: { refund_payment: { kind: Idempotency.EFFECTFUL, approval: 'required' } },
  runId: (runContext) => runContext.context.ticketId,
});

const paused = await run(agent, 'Refund A-100', { context: { ticketId: 'T-4711' } });
for (const item of paused.interruptions) {
  if (decisionOf(item) === 'approve') paused.state.approve(item);
  else paused.state.reject(item);
}
// Where the server made the decisions, before the state is stored or resumed:
await recordApprovals(paused.state, { by: session.userId });
await run(agent, paused.state);
// #endregion openai-agents
