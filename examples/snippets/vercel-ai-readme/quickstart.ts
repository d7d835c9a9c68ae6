// packages/vercel-ai/README.md, "quickstart": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

import { conversationId, model, prompt, tools } from '../support-vercel-ai.js';
// #region quickstart
import { Guard, Idempotency, MemoryStore, StepStoppedError } from '@toolfence/core';
import { fenceTools, stopErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs } from 'ai';

const guard = new Guard({ store: new MemoryStore() }); // RedisStore / PostgresStore across workers

const result = await generateText({
  model,
  tools: fenceTools(tools, {
    guard,
    policies: {
      chargeCard: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
      upsertContact: { kind: Idempotency.IDEMPOTENT },
    },
    runId: conversationId, // what makes two calls "the same call"; required by the default 'run' scope
  }),
  prompt,
  stopWhen: [stepCountIs(10), stopOnIndeterminate()],
});

const stop = stopErrorOf(result); // IndeterminateOutcomeError | ExecutionAbandonedError | StepStoppedError | undefined
if (stop) {
  // The charges may or may not have happened (every stopped call of the step is listed).
  // Check each with the provider, then settle its record:
  for (const call of StepStoppedError.callsOf(stop)) {
    // call.key, call.tool, call.callId (the SDK's toolCallId)
    await guard.resolve(call.key, { outcome: { charged: true } }); // or { released: true }
  }
}
// #endregion quickstart
