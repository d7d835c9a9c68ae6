// docs/langchain.md, "createagent-one-middleware": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { redis } from '../support.js';
import { checkpointer, createTicket, messages, model, searchDocs } from '../support-langchain.js';

// #region createagent-one-middleware
import { Guard, Idempotency } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { createAgent } from 'langchain';

const guard = new Guard({ store: new RedisStore({ client: redis }) });

const agent = createAgent({
  model,
  tools: [createTicket, searchDocs],
  checkpointer,
  middleware: [
    toolfenceMiddleware({
      guard,
      policies: {
        create_ticket: { kind: Idempotency.EFFECTFUL, keyArguments: ['title'] },
        // search_docs has no policy: it runs exactly as before
      },
    }),
  ],
});

await agent.invoke({ messages }, { configurable: { thread_id: 'ticket-4711' } });
// #endregion createagent-one-middleware
