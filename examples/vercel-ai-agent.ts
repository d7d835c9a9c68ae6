// A Vercel AI SDK agent whose tools are guarded by toolfence. Runs offline: the model is a
// scripted mock that behaves as real models do when they lose track, calling the same tool twice
// in one step and again in the next one.
//
//   npx tsx --conditions=@toolfence/source examples/vercel-ai-agent.ts
import { currentToolCall, Guard, Idempotency, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { fenceTools, indeterminateErrorOf, stopOnIndeterminate } from '@toolfence/vercel-ai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

// --- the tools, as an application already has them ------------------------------------------

const bookings: string[] = [];
let chargeAttempts = 0;

const tools = {
  bookSeat: tool({
    description: 'Book a seat on a flight',
    inputSchema: z.object({ flight: z.string(), seat: z.string() }),
    execute: async ({ flight, seat }) => {
      bookings.push(`${flight}/${seat}`);
      return { confirmation: `BK-${bookings.length}`, flight, seat };
    },
  }),
  chargeCard: tool({
    description: 'Charge the customer',
    inputSchema: z.object({ orderId: z.string(), cents: z.number() }),
    execute: async ({ orderId }): Promise<{ charged: string }> => {
      chargeAttempts++;
      // The payment provider took the charge, then the connection dropped before it answered.
      // (A provider that dedupes would get currentToolCall()?.idempotencyKey as its key.)
      const key = currentToolCall()?.idempotencyKey.slice(0, 8);
      throw Object.assign(new Error(`connection reset while charging ${orderId} (key ${key}…)`), {
        code: 'ECONNRESET',
      });
    },
  }),
  checkIn: tool({
    description: 'Check in, reporting progress',
    inputSchema: z.object({ flight: z.string() }),
    async *execute({ flight }) {
      yield { flight, status: 'checking documents' };
      yield { flight, status: 'checked in' };
    },
  }),
};

// --- toolfence: one guard (a shared store in production), one policy per effectful tool -------

const guard = new Guard({ store: new MemoryStore() });
const policies = {
  bookSeat: { kind: Idempotency.EFFECTFUL, keyArguments: ['flight', 'seat'] },
  chargeCard: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
  checkIn: { kind: Idempotency.IDEMPOTENT },
} as const;

// --- a scripted model ------------------------------------------------------------------------

type Step = Array<{ toolName: string; input: Record<string, unknown> }> | string;
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
function scriptedModel(script: Step[]) {
  let step = 0;
  const next = () => {
    const answer = script[step] ?? 'Done.';
    const id = step++;
    return typeof answer === 'string'
      ? { text: answer, calls: [] }
      : {
          text: undefined,
          calls: answer.map((call, index) => ({
            type: 'tool-call' as const,
            toolCallId: `call-${id}-${index}`,
            toolName: call.toolName,
            input: JSON.stringify(call.input),
          })),
        };
  };
  const finishReason = (text: string | undefined) => ({
    unified: text === undefined ? ('tool-calls' as const) : ('stop' as const),
    raw: undefined,
  });
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const { text, calls } = next();
      return {
        content: text === undefined ? calls : [{ type: 'text' as const, text }],
        finishReason: finishReason(text),
        usage,
        warnings: [],
      };
    },
    doStream: async () => {
      const { text, calls } = next();
      const parts = [
        { type: 'stream-start' as const, warnings: [] },
        ...(text === undefined
          ? calls
          : [
              { type: 'text-start' as const, id: 't' },
              { type: 'text-delta' as const, id: 't', delta: text },
              { type: 'text-end' as const, id: 't' },
            ]),
        { type: 'finish' as const, finishReason: finishReason(text), usage },
      ];
      return {
        stream: new ReadableStream({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  });
}

// --- 1. the model books the same seat twice in one step, and again in the next ----------------

const conversation = 'conversation-42';
const booking = await generateText({
  model: scriptedModel([
    [
      { toolName: 'bookSeat', input: { flight: 'LH 400', seat: '12A' } },
      { toolName: 'bookSeat', input: { seat: '12A', flight: 'LH 400' } },
    ],
    [{ toolName: 'bookSeat', input: { flight: 'LH 400', seat: '12A' } }],
    'Your seat is booked.',
  ]),
  tools: fenceTools(tools, { guard, policies, runId: conversation }),
  prompt: 'Book seat 12A on LH 400',
  stopWhen: [stepCountIs(5), stopOnIndeterminate()],
});
const answers = booking.steps.flatMap((step) => step.toolResults);
console.log('1. calls:', answers.length, '| bookings made:', bookings.length);
for (const answer of answers) console.log(`   ${answer.toolCallId} got`, JSON.stringify(answer.output));

// --- 2. the charge is lost in the network: the run stops instead of charging again ------------

const charging = await generateText({
  model: scriptedModel([
    [{ toolName: 'chargeCard', input: { orderId: 'A-100', cents: 45_000 } }],
    [{ toolName: 'chargeCard', input: { orderId: 'A-100', cents: 45_000 } }],
  ]),
  tools: fenceTools(tools, { guard, policies, runId: conversation }),
  prompt: 'Charge order A-100',
  stopWhen: [stepCountIs(5), stopOnIndeterminate()],
});
const error = indeterminateErrorOf(charging);
console.log('2. steps run:', charging.steps.length, '| charge attempts:', chargeAttempts);
console.log(
  '   stopped with',
  error?.name,
  `(${error instanceof IndeterminateOutcomeError ? error.reasonType : ''})`,
);

// The same question in a rejecting mode: generateText rejects with the typed error.
const rejected = await generateText({
  model: scriptedModel([[{ toolName: 'chargeCard', input: { orderId: 'A-100', cents: 45_000 } }]]),
  tools: fenceTools(tools, { guard, policies, runId: conversation }),
  prompt: 'Charge order A-100 again',
  stopWhen: [stepCountIs(5), stopOnIndeterminate({ rethrow: true })],
}).catch((reason: unknown) => reason);
console.log('   asked again: rejected with', (rejected as Error).name, '| charge attempts:', chargeAttempts);

// An operator checks the provider, sees the charge went through, and records it.
if (error !== undefined) await guard.resolve(error.key, { outcome: { charged: 'A-100' } });
const afterResolution = await generateText({
  model: scriptedModel([[{ toolName: 'chargeCard', input: { orderId: 'A-100', cents: 45_000 } }], 'Paid.']),
  tools: fenceTools(tools, { guard, policies, runId: conversation }),
  prompt: 'Charge order A-100',
  stopWhen: [stepCountIs(5), stopOnIndeterminate()],
});
console.log(
  '   after the operator resolved it:',
  JSON.stringify(afterResolution.steps[0]?.toolResults[0]?.output),
  '| charge attempts:',
  chargeAttempts,
);

// --- 3. a streaming tool stays a stream; its repeat replays the final value --------------------

const checkIn = streamText({
  model: scriptedModel([
    [{ toolName: 'checkIn', input: { flight: 'LH 400' } }],
    [{ toolName: 'checkIn', input: { flight: 'LH 400' } }],
    'Checked in.',
  ]),
  tools: fenceTools(tools, { guard, policies, runId: conversation }),
  prompt: 'Check me in',
  stopWhen: [stepCountIs(5), stopOnIndeterminate()],
});
for await (const part of checkIn.fullStream) {
  if (part.type === 'tool-result') {
    const kind = part.preliminary ? 'progress' : 'result  ';
    console.log(`3. ${part.toolCallId} ${kind}`, JSON.stringify(part.output));
  }
}
