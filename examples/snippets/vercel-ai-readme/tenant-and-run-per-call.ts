// packages/vercel-ai/README.md, "tenant-and-run-per-call": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import type { LanguageModel, ToolSet } from 'ai';

declare const model: LanguageModel;
declare const tools: ToolSet;
declare const threadId: string;
declare const appContext: { userId: string };

// #region tenant-and-run-per-call
import { toolfenceContext } from '@toolfence/vercel-ai';
import { generateText } from 'ai';

// AI SDK 6: one context for all tools, beside your own
await generateText({
  model,
  tools,
  prompt: 'Refund order A-100',
  experimental_context: toolfenceContext({ runId: threadId }, appContext),
});
// #endregion tenant-and-run-per-call
