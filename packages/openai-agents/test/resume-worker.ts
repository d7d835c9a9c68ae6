// A second process: resumes a serialised RunState (approved) on RedisStore and reports how many
// refunds its body made. Run by fence-tool.test.ts with tsx --conditions=@toolfence/source.
//   argv: <redisUrl> <prefix> <runId> <stateFile>
import { readFileSync } from 'node:fs';
import { RunState, run } from '@openai/agents-core';
import { fenceAgent } from '@toolfence/openai-agents';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { agentWith, Payments, recordingGuard, refundPolicy, refundTool, scriptedModel } from './support.js';

const [redisUrl, prefix, runId, stateFile] = process.argv.slice(2) as [string, string, string, string];
const client = new Redis(redisUrl);
const store = new RedisStore({ client, prefix });
const events: { type: string }[] = [];
const payments = new Payments();
// The same agent as the first process built, with a model whose next answer is the final text.
const agent = fenceAgent(
  agentWith(scriptedModel(['Refunded.']), [refundTool(payments, { needsApproval: true })]),
  {
    guard: recordingGuard(store, events as never),
    policies: refundPolicy,
    runId,
  },
);
const state = await RunState.fromString(agent, readFileSync(stateFile, 'utf8'));
const result = await run(agent, state);
process.stdout.write(
  `${JSON.stringify({ refunds: payments.refunds.length, final: result.finalOutput, events: events.map((e) => e.type) })}\n`,
);
await store.close();
await client.quit();
