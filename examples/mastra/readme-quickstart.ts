// The quickstart of packages/mastra/README.md, compiled by test/mastra/run.sh (Node 24, with
// @mastra/core), which is where @mastra/core's types are installed.
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { createStep, createWorkflow } from '@mastra/core/workflows';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import type { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { fenceAgent, fenceStep, fenceTool, stopErrorOf } from '../../packages/mastra/src/index.js';

export async function quickstart(
  model: MockLanguageModelV3,
  payments: { refund(orderId: string): Promise<string> },
) {
  const refundPayment = createTool({
    id: 'refund_payment',
    description: 'Refund an order.',
    inputSchema: z.object({ orderId: z.string() }),
    execute: async ({ orderId }) => ({ refundId: await payments.refund(orderId) }),
  });
  const agent = new Agent({
    id: 'support',
    name: 'support',
    instructions: 'Refund when asked.',
    model,
    tools: { refundPayment },
  });
  const approve = createStep({
    id: 'approve',
    inputSchema: z.object({ orderId: z.string() }),
    outputSchema: z.object({ orderId: z.string() }),
    resumeSchema: z.object({ approved: z.boolean() }),
    execute: async ({ inputData, resumeData, suspend }) => {
      if (resumeData === undefined) return suspend({});
      return inputData;
    },
  });
  // #region quickstart
  const guard = new Guard({ store: new MemoryStore() }); // a RedisStore or PostgresStore across workers
  const refundPolicy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;

  // An agent: a fork whose tools are fenced and whose approvals are bound to the call.
  const support = fenceAgent(agent, { guard, policies: { refundPayment: refundPolicy } });

  // A workflow: the tool as a step, and an approval step whose first resume is the answer.
  const refund = createStep(fenceTool(refundPayment, { guard, policy: refundPolicy }), { retries: 3 });
  const workflow = createWorkflow({
    id: 'refund-flow',
    inputSchema: z.object({ orderId: z.string() }),
    outputSchema: z.object({ refundId: z.string() }),
  })
    .then(fenceStep(approve, { guard }))
    .then(refund)
    .commit();

  const run = await workflow.createRun();
  await run.start({ inputData: { orderId: 'ord_1' } });
  const result = await run.resume({ step: 'approve', resumeData: { approved: true } });
  const stop = stopErrorOf(result); // the typed IndeterminateOutcomeError, rebuilt from the snapshot
  if (stop !== undefined) {
    // check the provider, then settle it: toolfence resolve, or guard.resolve(...)
  }
  // #endregion quickstart
  return { support, result };
}
