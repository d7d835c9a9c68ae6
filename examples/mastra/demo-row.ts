// The demo's Mastra rows, without and with toolfence, on Mastra's real runtime (Node >= 22.13):
// run by test/mastra/run.sh, which installs @mastra/core with Node 24 and links it here.
//   2c  a workflow step asks a Mastra agent to refund; its model sends the same refund twice
//   4c  a refund step (the tool as a step, retries: 2) whose refund lands and whose reply is lost
// Exit code 0 when every guarded count is as expected, 1 otherwise.
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { createTool } from '@mastra/core/tools';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { Guard, type GuardEvent, Idempotency, MemoryStore } from '@toolfence/core';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { fenceAgent, fenceTool } from '../../packages/mastra/src/index.js';
import { MASTRA_ROWS } from '../demo/mastra-row.js';
import type { Counts, Row } from '../demo/scenarios.js';
import { bold, table, verdict } from '../demo/table.js';

const refundPolicy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** A payments provider: counts refunds; `loseReply` makes every refund land, then throw. */
class Payments {
  refunds = 0;
  constructor(readonly loseReply = false) {}
  async refund(orderId: string): Promise<{ refundId: string }> {
    await new Promise((resolve) => setTimeout(resolve, 5));
    this.refunds += 1;
    if (this.loseReply)
      throw Object.assign(new Error(`read ECONNRESET (refund ${orderId})`), { code: 'ECONNRESET' });
    return { refundId: `re_${this.refunds}` };
  }
}

const refundTool = (payments: Payments) =>
  createTool({
    id: 'refund_payment',
    description: 'Refund (part of) an order.',
    inputSchema: z.object({ orderId: z.string(), amountCents: z.number().int() }),
    outputSchema: z.object({ refundId: z.string() }),
    execute: async ({ orderId }) => payments.refund(orderId),
  });

/** A model that sends two identical refund calls, then answers. */
function twiceModel(): MockLanguageModelV3 {
  let turn = 0;
  const args = JSON.stringify({ orderId: 'A-100', amountCents: 2250 });
  return new MockLanguageModelV3({
    doGenerate: async () =>
      turn++ === 0
        ? {
            content: ['call_1', 'call_2'].map((id) => ({
              type: 'tool-call' as const,
              toolCallId: id,
              toolName: 'refund_payment',
              input: args,
            })),
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: 'text', text: 'Refunded.' }],
            finishReason: { unified: 'stop', raw: undefined },
            usage,
            warnings: [],
          },
  });
}

const order = z.object({ orderId: z.string(), amountCents: z.number().int() });

/** 2c: a workflow step runs the support agent (fenced with fenceAgent when a guard is given). */
async function sameRefundTwice(guard: Guard | undefined): Promise<number> {
  const payments = new Payments();
  const plain = new Agent({
    id: 'support',
    name: 'support',
    instructions: 'You help customers.',
    model: twiceModel(),
    tools: { refund_payment: refundTool(payments) },
  });
  const agent =
    guard === undefined ? plain : fenceAgent(plain, { guard, policies: { refund_payment: refundPolicy } });
  const ask = createStep({
    id: 'ask-support',
    inputSchema: z.object({ ticket: z.string() }),
    outputSchema: z.object({ text: z.string() }),
    execute: async ({ inputData, mastra }) => ({
      text: (await mastra.getAgent('support').generate(inputData.ticket)).text,
    }),
  });
  const workflow = createWorkflow({
    id: 'support',
    inputSchema: z.object({ ticket: z.string() }),
    outputSchema: z.any(),
  })
    .then(ask)
    .commit();
  const mastra = new Mastra({ agents: { support: agent }, workflows: { workflow }, logger: false });
  const run = await mastra.getWorkflow('workflow').createRun();
  await run.start({ inputData: { ticket: 'Refund A-100' } });
  return payments.refunds;
}

/** 4c: the refund tool as a workflow step with retries: 2; every refund's reply is lost. */
async function lostReplyRetried(guard: Guard | undefined): Promise<number> {
  const payments = new Payments(true);
  const tool = refundTool(payments);
  const step = createStep(guard === undefined ? tool : fenceTool(tool, { guard, policy: refundPolicy }), {
    retries: 2,
  });
  const workflow = createWorkflow({ id: 'refund', inputSchema: order, outputSchema: z.any() })
    .then(step)
    .commit();
  const mastra = new Mastra({ workflows: { workflow }, logger: false });
  const run = await mastra.getWorkflow('workflow').createRun();
  await run.start({ inputData: { orderId: 'A-100', amountCents: 2250 } });
  return payments.refunds;
}

const zero: Counts = {
  effects: 0,
  deduplicated: 0,
  indeterminate: 0,
  abandoned: 0,
  takeovers: 0,
  takeoverFence: 0,
};

async function row(
  [id, title, tool]: (typeof MASTRA_ROWS)[number],
  scenario: (guard: Guard | undefined) => Promise<number>,
  expected: { without: number; with: Counts },
): Promise<Row> {
  const without = await scenario(undefined);
  const events: GuardEvent[] = [];
  const guard = new Guard({
    store: new MemoryStore(),
    tenant: 'shop',
    onEvent: (event) => events.push(event),
  });
  const effects = await scenario(guard);
  const keysWith = (type: GuardEvent['type']) =>
    new Set(events.filter((event) => event.type === type).map((event) => event.key)).size;
  return {
    id,
    title,
    agent: 'Mastra',
    tool,
    without,
    with: {
      ...zero,
      effects,
      deduplicated: events.filter((event) => event.type === 'tool.deduplicated').length,
      indeterminate: keysWith('tool.indeterminate'),
      abandoned: keysWith('tool.abandoned'),
    },
    expected,
  };
}

const startedMs = Date.now();
const [twice, lost] = MASTRA_ROWS;
const rows = [
  await row(twice, sameRefundTwice, { without: 2, with: { ...zero, effects: 1, deduplicated: 1 } }),
  await row(lost, lostReplyRetried, { without: 3, with: { ...zero, effects: 1, indeterminate: 1 } }),
];
const results = [{ id: 'mastra', rows, events: [], notes: [] }];
console.log(
  bold(`toolfence demo, the Mastra rows (@mastra/core on Node ${process.versions.node}, MemoryStore)`),
);
console.log(table(results));
const result = verdict(results, Date.now() - startedMs);
console.log(`\n${result.text}`);
process.exit(result.ok ? 0 : 1);
