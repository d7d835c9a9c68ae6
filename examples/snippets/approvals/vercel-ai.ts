// docs/approvals.md, "vercel-ai": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { ModelMessage } from 'ai';
import { model, tools } from '../support-vercel-ai.js';

declare const session: { userId: string };
declare function loadConversation(id: string): Promise<ModelMessage[]>;
declare const request: { conversationId: string; approval: ModelMessage };

// #region vercel-ai
import { Guard, Idempotency } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { fenceTools, recordApprovals, toolfenceContext } from '@toolfence/vercel-ai';
import { generateText } from 'ai';
import { redis } from '../support.js';

const guard = new Guard({ store: new RedisStore({ client: redis }) });
const fenced = fenceTools(tools, {
  guard,
  policies: { chargeCard: { kind: Idempotency.EFFECTFUL, approval: 'required' } },
});

// The authenticated route that receives the user's tool-approval-response:
const messages = [...(await loadConversation(request.conversationId)), request.approval];
const context = toolfenceContext({ runId: request.conversationId });
await recordApprovals(fenced, { messages, by: session.userId, experimental_context: context });
await generateText({ model, tools: fenced, messages, experimental_context: context });
// #endregion vercel-ai
