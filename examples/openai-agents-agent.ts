// An OpenAI Agents JS agent (a triage agent that hands off to a refunds agent) whose tools are
// guarded by toolfence with one policy table. Runs offline: the model is the SDK's own
// ScriptedModel, behaving as real models do when they lose track (the same refund twice in one
// turn), then a refund that needs approval, approved, serialised and resumed twice.
//
//   npx tsx --conditions=@toolfence/source examples/openai-agents-agent.ts
import { Agent, RunState, run, setTracingDisabled, tool } from '@openai/agents-core';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents-core/testing';
import { currentToolCall, Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceAgent, stopErrorOf } from '@toolfence/openai-agents';
import { z } from 'zod';

setTracingDisabled(true); // offline: no trace exporter

// --- the agents, as an application already has them ----------------------------------------

const refunds: string[] = [];
let replyLost = false;

const refundPayment = tool({
  name: 'refund_payment',
  description: 'Refund (part of) an order.',
  parameters: z.object({ orderId: z.string(), amountCents: z.number().int() }),
  needsApproval: async (_context, { amountCents }) => amountCents > 10_000,
  execute: async ({ orderId, amountCents }) => {
    // Pass the key to a provider that deduplicates (Stripe's Idempotency-Key).
    const key = currentToolCall()?.idempotencyKey;
    refunds.push(`${orderId} ${amountCents} key=${key?.slice(0, 12)}…`);
    if (replyLost) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    return { refundId: `re_${refunds.length}` };
  },
});

const call = (orderId: string, amountCents: number, callId: string) =>
  functionCall('refund_payment', { orderId, amountCents }, { callId });

function agents(refundTurns: ConstructorParameters<typeof ScriptedModel>[0]) {
  const refundsAgent = new Agent({
    name: 'refunds',
    instructions: 'Refund damaged orders.',
    model: new ScriptedModel(refundTurns),
    tools: [refundPayment],
  });
  return new Agent({
    name: 'triage',
    instructions: 'Send refund requests to the refunds agent.',
    model: new ScriptedModel([[functionCall('transfer_to_refunds', {}, { callId: 'call_handoff' })]]),
    handoffs: [refundsAgent],
  });
}

// --- toolfence: one guard, one policy table for every agent -------------------------------

const guard = new Guard({ store: new MemoryStore(), tenant: 'shop' }); // RedisStore across workers
const options = {
  guard,
  policies: { refund_payment: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } },
  runId: (runContext: { context: { ticketId: string } }) => runContext.context.ticketId,
};

// 1. The model sends the same refund twice in one turn: one refund.
const first = await run(
  fenceAgent(
    agents([[call('A-100', 2250, 'call_1'), call('A-100', 2250, 'call_2')], [assistantMessage('Refunded.')]]),
    options,
  ),
  'Order A-100 arrived damaged.',
  { context: { ticketId: 'T-1' } },
);
console.log(`1. ${first.lastAgent?.name}: "${first.finalOutput}"; refunds made: ${refunds.length}`);

// 2. A large refund needs approval: approve, serialise, resume twice (say, two workers got the job).
const big = fenceAgent(
  agents([
    [call('B-200', 25_000, 'call_3')],
    [assistantMessage('Refunded.')],
    [assistantMessage('Refunded.')],
  ]),
  options,
);
const paused = await run(big, 'Order B-200 arrived damaged.', { context: { ticketId: 'T-2' } });
paused.state.approve(paused.interruptions[0]!);
const saved = paused.state.toString();
for (const worker of ['worker 1', 'worker 2']) {
  const resumed = await run(big, await RunState.fromString(big, saved));
  console.log(`2. ${worker} resumed: "${resumed.finalOutput}"; refunds made: ${refunds.length}`);
}

// 3. The refund lands but its reply is lost: run() stops with the typed error.
replyLost = true;
try {
  await run(
    fenceAgent(agents([[call('C-300', 1000, 'call_4')], [assistantMessage('?')]]), options),
    'Refund C-300',
    {
      context: { ticketId: 'T-3' },
    },
  );
} catch (error) {
  const stop = stopErrorOf(error);
  if (stop === undefined) throw error;
  console.log(`3. run() stopped: ${stop.name} for ${stop.tool}; refunds made: ${refunds.length}`);
  // Check with the provider, then settle the record: guard.resolve(stop.key, { outcome } | { released: true }).
}
