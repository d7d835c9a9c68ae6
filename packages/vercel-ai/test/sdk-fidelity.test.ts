// A fenced AI SDK tool is indistinguishable to the SDK (issue #27 item 7): `needsApproval`
// functions, the input schema's parsing (trim, case, coercion, defaults) and the tool's error
// answer see exactly what they see unfenced. Each cell runs the same scripted generateText twice,
// unfenced and fenced, and compares what the SDK did.
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceTools } from '@toolfence/vercel-ai';
import { generateText, type ModelMessage, stepCountIs, type ToolSet, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptedStep, scriptedModel } from '../../../test/support/scripted-model.js';

const HIGH_RISK_IBAN = 'DE89370400440532013000';
const LOW_RISK_IBAN = 'FR1420041010050500013M02606';

const payoutSchema = z.object({
  iban: z.string().trim().toUpperCase(),
  amount: z.coerce.number(),
  currency: z.string().default('EUR'),
});
type Payout = z.infer<typeof payoutSchema>;

/** What one run let the SDK show. */
interface Observed {
  paid: string[];
  approvalInputs: unknown[];
  /** The content parts of every step: calls, approval requests, results, errors, text. */
  parts: unknown[];
}

type ApprovalPolicy = boolean | ((input: Payout) => boolean);

function payoutTools(observed: Observed, needsApproval?: ApprovalPolicy) {
  return {
    payOut: tool({
      description: 'Pay an amount to an IBAN.',
      inputSchema: payoutSchema,
      ...(needsApproval === undefined
        ? {}
        : {
            needsApproval:
              typeof needsApproval === 'boolean'
                ? needsApproval
                : async (input: Payout) => {
                    observed.approvalInputs.push(input);
                    return needsApproval(input);
                  },
          }),
      execute: async ({ iban, amount, currency }) => {
        if (amount <= 0) throw new Error(`amount must be positive, got ${amount}`);
        observed.paid.push(`${iban} ${amount} ${currency}`);
        return `paid ${amount} ${currency}`;
      },
    }),
  };
}

type Kind = (typeof Idempotency)['EFFECTFUL' | 'IDEMPOTENT'];
const wraps = {
  unfenced: <T extends ToolSet>(tools: T, _kind: Kind) => tools,
  fenced: <T extends ToolSet>(tools: T, kind: Kind) =>
    fenceTools(tools, {
      guard: new Guard({ store: new MemoryStore() }),
      policies: { payOut: { kind } } as never,
      runId: 'conversation-1',
    }),
};

/** The model's raw call: spaces, lower case, an amount as a string, no currency. */
const payout = (iban = HIGH_RISK_IBAN, amount: unknown = '9000'): ScriptedStep => [
  { toolName: 'payOut', input: { iban: ` ${iban.toLowerCase()} `, amount }, toolCallId: 'call_1' },
];

function partsOf(content: ReadonlyArray<{ type: string }>): unknown[] {
  return content.map((part) => {
    const p = part as Record<string, any>;
    if (part.type === 'tool-approval-request') return { type: part.type, input: p.toolCall.input };
    if (part.type === 'tool-result') return { type: part.type, input: p.input, output: p.output };
    if (part.type === 'tool-error') {
      // An invalid input's error is the SDK's message (a string); a body's, the thrown Error.
      return {
        type: part.type,
        error: p.error instanceof Error ? p.error.name : String(p.error).split(':')[0],
      };
    }
    if (part.type === 'text') return { type: part.type, text: p.text };
    return { type: part.type };
  });
}

/**
 * generateText with the same script unfenced and fenced; with `answer`, the approval request is
 * answered (approved or denied) and the conversation resumed.
 */
async function bothWays(
  step: ScriptedStep,
  needsApproval?: ApprovalPolicy,
  answer?: { approved: boolean },
  kind: Kind = Idempotency.EFFECTFUL,
): Promise<[Observed, Observed]> {
  const observations: Observed[] = [];
  for (const wrap of [wraps.unfenced, wraps.fenced]) {
    const observed: Observed = { paid: [], approvalInputs: [], parts: [] };
    const tools = wrap(payoutTools(observed, needsApproval), kind);
    const prompt: ModelMessage[] = [{ role: 'user', content: 'Pay the supplier.' }];
    const first = await generateText({
      model: scriptedModel([step, 'Done.']),
      tools,
      messages: prompt,
      stopWhen: stepCountIs(5),
    });
    observed.parts = partsOf(first.steps.flatMap((done) => done.content));
    const request = first.content.find((part) => part.type === 'tool-approval-request');
    if (answer !== undefined && request !== undefined) {
      const resumed = await generateText({
        model: scriptedModel(['Done.']),
        tools,
        messages: [
          ...prompt,
          ...first.response.messages,
          {
            role: 'tool',
            content: [{ type: 'tool-approval-response', approvalId: request.approvalId, ...answer }],
          },
        ],
        stopWhen: stepCountIs(5),
      });
      observed.parts.push(...partsOf(resumed.steps.flatMap((done) => done.content)));
    }
    observations.push(observed);
  }
  return observations as [Observed, Observed];
}

const normalised = { iban: HIGH_RISK_IBAN, amount: 9000, currency: 'EUR' };

describe('AI SDK needsApproval functions see the parsed input, fenced as unfenced', () => {
  const highRisk = (input: Payout) => input.iban === HIGH_RISK_IBAN;

  it('a normalised high-risk IBAN asks for approval; nothing is paid', async () => {
    const [plain, guarded] = await bothWays(payout(), highRisk);
    expect(plain).toEqual({
      paid: [],
      approvalInputs: [normalised],
      parts: [{ type: 'tool-call' }, { type: 'tool-approval-request', input: normalised }],
    });
    expect(guarded).toEqual(plain);
  });

  it('approved: the body runs once with the parsed input; denied: it is not entered', async () => {
    const [plain, guarded] = await bothWays(payout(), highRisk, { approved: true });
    expect(plain.paid).toEqual([`${HIGH_RISK_IBAN} 9000 EUR`]);
    expect(guarded).toEqual(plain);

    const [plainDenied, guardedDenied] = await bothWays(payout(), highRisk, { approved: false });
    expect(plainDenied.paid).toEqual([]);
    expect(guardedDenied).toEqual(plainDenied);
  });

  it('a policy on a defaulted field: the parsed input needs no approval and runs', async () => {
    const [plain, guarded] = await bothWays(payout(LOW_RISK_IBAN, '10'), (input) => input.currency !== 'EUR');
    const parsed = { iban: LOW_RISK_IBAN, amount: 10, currency: 'EUR' };
    expect(plain).toEqual({
      paid: [`${LOW_RISK_IBAN} 10 EUR`],
      approvalInputs: [parsed],
      parts: [
        { type: 'tool-call' },
        { type: 'tool-result', input: parsed, output: 'paid 10 EUR' },
        { type: 'text', text: 'Done.' },
      ],
    });
    expect(guarded).toEqual(plain);
  });

  it('needsApproval: true asks every time, fenced as unfenced', async () => {
    const [plain, guarded] = await bothWays(payout(LOW_RISK_IBAN), true);
    expect(plain.parts).toContainEqual({
      type: 'tool-approval-request',
      input: { iban: LOW_RISK_IBAN, amount: 9000, currency: 'EUR' },
    });
    expect(guarded).toEqual(plain);
  });
});

describe('AI SDK parsing and errors, fenced as unfenced', () => {
  it('an input the schema refuses: the same tool-error, nothing paid', async () => {
    const [plain, guarded] = await bothWays(payout(LOW_RISK_IBAN, 'nine thousand'));
    expect(plain.paid).toEqual([]);
    // The SDK's own wording of the refusal differs between majors (AI SDK 6 names the tool, 7
    // gives the error's name, AI_InvalidToolInputError): the same both ways is what counts.
    expect(plain.parts).toContainEqual({
      type: 'tool-error',
      error: expect.stringMatching(/payOut|InvalidToolInput/),
    });
    expect(guarded).toEqual(plain);
  });

  // An IDEMPOTENT policy: its failed call is released, so the error is the body's own. (An
  // EFFECTFUL call that fails is indeterminate: a stop, on purpose; see the stop tests.)
  it("a body's ordinary error: the same tool-error part, the loop goes on", async () => {
    const [plain, guarded] = await bothWays(
      payout(LOW_RISK_IBAN, '-5'),
      undefined,
      undefined,
      Idempotency.IDEMPOTENT,
    );
    expect(plain.paid).toEqual([]);
    expect(plain.parts).toEqual([
      { type: 'tool-call' },
      { type: 'tool-error', error: 'Error' },
      { type: 'text', text: 'Done.' },
    ]);
    expect(guarded.parts).toEqual(plain.parts);
  });
});
