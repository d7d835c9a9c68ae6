// The loop closed (issue #20, docs/operations.md): an agent stops on a refund whose outcome is
// unknown; an operator finds it with the `toolfence` CLI (a real process), checks the payment
// provider's ledger, settles it; the stopped run goes on with that decision. The refund is paid
// once. Against the shared Redis, under a prefix of this test's own, erased afterwards.
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { tool as langchainTool } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import {
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyPolicy,
  IndeterminateOutcomeError,
} from '@toolfence/core';
import { toolfenceMiddleware } from '@toolfence/langchain';
import { RedisStore } from '@toolfence/stores/redis';
import { fenceTools, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { tool as aiTool, generateText, stepCountIs } from 'ai';
import type { Redis } from 'ioredis';
import { createAgent, fakeModel } from 'langchain';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { connectRedis, deletePrefix, keysUnder, randomPrefix, redisUrl } from '../support/redis.js';
import { runCli } from '../support/run-cli.js';
import { scriptedModel } from '../support/scripted-model.js';

const prefix = randomPrefix('operator-loop');
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connectRedis();
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await store?.close();
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
    client.disconnect();
  }
});

/** The payment provider: its ledger is what the operator checks. */
function paymentProvider() {
  const ledger: string[] = [];
  let failNext: 'after-paying' | 'before-paying' | undefined;
  return {
    ledger,
    failNextCall(how: 'after-paying' | 'before-paying') {
      failNext = how;
    },
    refund(orderId: string, amount: number): string {
      const failure = failNext;
      failNext = undefined;
      const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      if (failure === 'before-paying') throw reset;
      ledger.push(`${orderId}:${amount}`);
      if (failure === 'after-paying') throw reset; // paid, but the answer was lost
      return `refund ${orderId} paid (R-${ledger.length})`;
    },
  };
}

const refundPolicy = (tool: string) =>
  ({
    kind: Idempotency.EFFECTFUL,
    describe: (args: Record<string, unknown>) => `${tool} ${String(args.orderId)} EUR ${String(args.amount)}`,
  }) satisfies IdempotencyPolicy;

function operator(tenant: string) {
  return (args: readonly string[]) =>
    runCli(['--store', redisUrl, '--prefix', prefix, '--tenant', tenant, ...args]);
}

describe('the operator loop', () => {
  it('LangChain: the agent stops on an indeterminate refund; the CLI lists and resolves it; the resumed thread finishes with the refund paid once', async () => {
    const tenant = `shop-${Date.now()}`;
    const events: GuardEvent[] = [];
    const guard = new Guard({ store, tenant, onEvent: (event) => events.push(event) });
    const provider = paymentProvider();
    const refundOrder = langchainTool(async ({ orderId, amount }) => provider.refund(orderId, amount), {
      name: 'refund_order',
      description: 'Refund an order.',
      schema: z.object({ orderId: z.string(), amount: z.number() }),
    });
    const model = fakeModel()
      .respondWithTools([{ name: 'refund_order', args: { orderId: 'A-100', amount: 30 }, id: 'call_1' }])
      .respond(new AIMessage('Refund done.'));
    const agent = createAgent({
      model,
      tools: [refundOrder],
      checkpointer: new MemorySaver(),
      middleware: [toolfenceMiddleware({ guard, policies: { refund_order: refundPolicy('refund') } })],
    });
    const thread = { configurable: { thread_id: 'support-42' } };
    const say = operator(tenant);

    provider.failNextCall('after-paying');
    const stopped = await agent
      .invoke({ messages: [{ role: 'user', content: 'Refund A-100' }] }, thread)
      .catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(stopped)).toBe(true);
    expect(provider.ledger).toEqual(['A-100:30']);

    // On call: what is waiting for me?
    const waiting = await say(['list', '--json']);
    expect(waiting.code, waiting.stderr).toBe(0);
    expect(waiting.records).toHaveLength(1);
    const [record] = waiting.records as Array<{
      key: string;
      description: string;
      runId: string;
      callId: string;
    }>;
    expect(record).toMatchObject({
      key: (stopped as IndeterminateOutcomeError).key,
      description: 'refund A-100 EUR 30',
      runId: 'support-42',
      callId: 'call_1',
    });
    // The ledger says it was paid: state the outcome.
    const resolved = await say([
      'resolve',
      record?.key as string,
      '--outcome',
      JSON.stringify('refund A-100 paid (R-1, verified)'),
      '--by',
      'oncall@example.com',
      '--reason',
      'R-1 in the provider ledger',
    ]);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect((await say(['list', '--json'])).records).toEqual([]);

    const resumed = await agent.invoke(null, thread);
    const toolMessages = resumed.messages.filter((message): message is ToolMessage =>
      ToolMessage.isInstance(message),
    );
    expect(toolMessages.map((message) => [message.tool_call_id, message.content])).toEqual([
      ['call_1', 'refund A-100 paid (R-1, verified)'],
    ]);
    expect(resumed.messages.at(-1)?.content).toBe('Refund done.');
    expect(provider.ledger).toEqual(['A-100:30']);
    const inspected = await say(['inspect', record?.key as string, '--json']);
    expect(inspected.json[0]).toMatchObject({
      record: { state: 'completed', resolution: { action: 'completed', by: 'oncall@example.com' } },
      resolutions: [{ action: 'completed', reason: 'R-1 in the provider ledger' }],
    });
  }, 120_000);

  it('AI SDK: a re-run replays the resolved outcome; a released call runs exactly once', async () => {
    const tenant = `shop-ai-${Date.now()}`;
    const guard = new Guard({ store, tenant });
    const provider = paymentProvider();
    const tools = fenceTools(
      {
        refundOrder: aiTool({
          description: 'Refund an order',
          inputSchema: z.object({ orderId: z.string(), amount: z.number() }),
          execute: async ({ orderId, amount }) => provider.refund(orderId, amount),
        }),
      },
      { guard, policies: { refundOrder: refundPolicy('refundOrder') }, runId: 'conversation-9' },
    );
    const run = (orderId: string) =>
      generateText({
        model: scriptedModel([
          [{ toolName: 'refundOrder', input: { orderId, amount: 12 }, toolCallId: `call-${orderId}` }],
          'Done.',
        ]),
        tools,
        prompt: `refund ${orderId}`,
        stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
      });
    const say = operator(tenant);
    const outputOf = (result: Awaited<ReturnType<typeof run>>) =>
      result.steps.flatMap((step) => step.toolResults.map((part) => part.output));

    // Paid, answer lost: the operator states the outcome; the re-run replays it.
    provider.failNextCall('after-paying');
    // One stopped call: generateText rejects with its IndeterminateOutcomeError.
    expect(IndeterminateOutcomeError.isInstance(await run('B-1').catch((error: unknown) => error))).toBe(
      true,
    );
    // Not paid (refused before the payment): the operator releases; the re-run pays once.
    provider.failNextCall('before-paying');
    expect(IndeterminateOutcomeError.isInstance(await run('B-2').catch((error: unknown) => error))).toBe(
      true,
    );
    expect(provider.ledger).toEqual(['B-1:12']);

    const waiting = await say(['list', '--json', '--tool', 'refundOrder']);
    const byDescription = new Map(waiting.records.map((line) => [line.description, line.key as string]));
    expect([...byDescription.keys()].sort()).toEqual(['refundOrder B-1 EUR 12', 'refundOrder B-2 EUR 12']);
    expect(
      (
        await say([
          'resolve',
          byDescription.get('refundOrder B-1 EUR 12') as string,
          '--outcome',
          '"refund B-1 paid (R-1)"',
          '--by',
          'ops',
        ])
      ).code,
    ).toBe(0);
    expect(
      (
        await say([
          'release',
          byDescription.get('refundOrder B-2 EUR 12') as string,
          '--by',
          'ops',
          '--reason',
          'no payment in the ledger',
        ])
      ).code,
    ).toBe(0);

    expect(outputOf(await run('B-1'))).toEqual(['refund B-1 paid (R-1)']);
    expect(outputOf(await run('B-2'))).toEqual(['refund B-2 paid (R-2)']);
    expect(outputOf(await run('B-2'))).toEqual(['refund B-2 paid (R-2)']);
    expect(provider.ledger).toEqual(['B-1:12', 'B-2:12']);
  }, 120_000);
});
