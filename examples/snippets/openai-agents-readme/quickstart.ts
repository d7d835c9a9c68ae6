// packages/openai-agents/README.md, "quickstart": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { Agent } from '@openai/agents';

declare const agent: Agent<{ ticketId: string }>;
const input = 'Refund order A-100';

// #region quickstart
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceAgent, stopErrorOf } from '@toolfence/openai-agents';
import { run } from '@openai/agents';

const guard = new Guard({ store: new MemoryStore() }); // RedisStore / PostgresStore across workers

// a clone: `agent` itself is not changed
const guarded = fenceAgent(agent, {
  guard,
  policies: { refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
  runId: (runContext) => runContext.context.ticketId, // required by 'run'-scoped policies
});

try {
  await run(guarded, input, { context: { ticketId: 'T-4711' } });
} catch (error) {
  const stop = stopErrorOf(error); // the typed error inside the SDK's ToolCallError
  if (stop === undefined) throw error;
  // check the provider, then: await guard.resolve(stop.key, { outcome } | { released: true })
}
// #endregion quickstart
