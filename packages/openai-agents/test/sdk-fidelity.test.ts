// A fenced OpenAI Agents tool is indistinguishable to the SDK (issue #27 item 7): its approval
// policy, its guardrails, its enablement, its parser and its error function see exactly what they
// see unfenced. Each cell runs the same scripted agent twice, unfenced and fenced (the SDK's own
// ScriptedModel, offline), and compares what the SDK did: interruptions, what the policy and the
// guardrails were given, what the body paid, what the model was told, how the run ended.
import {
  defineToolInputGuardrail,
  defineToolOutputGuardrail,
  type FunctionTool,
  type RunResult,
  run,
  ToolGuardrailFunctionOutputFactory,
  type ToolInputGuardrailDefinition,
  type ToolOutputGuardrailDefinition,
  tool,
} from '@openai/agents-core';
import { Idempotency, MemoryStore } from '@toolfence/core';
import { fenceTool } from '@toolfence/openai-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentWith, type Call, recordingGuard, scriptedModel } from './support.js';

const HIGH_RISK_IBAN = 'DE89370400440532013000';
const LOW_RISK_IBAN = 'FR1420041010050500013M02606';

/** Trim, upper case, coercion and a default: the model's raw JSON is none of what the body gets. */
const payoutSchema = z.object({
  iban: z.string().trim().toUpperCase(),
  amount: z.coerce.number(),
  currency: z.string().default('EUR'),
});
/** The options of `tool()` each cell varies. */
interface PayoutOptions {
  needsApproval?: boolean | ((context: unknown, input: z.infer<typeof payoutSchema>) => Promise<boolean>);
  inputGuardrails?: ToolInputGuardrailDefinition[];
  outputGuardrails?: ToolOutputGuardrailDefinition[];
  isEnabled?: boolean;
  errorFunction?: (context: unknown, error: unknown) => string;
}

/** What one run let the SDK show: the same for the fenced and the unfenced tool. */
interface Observed {
  paid: string[];
  /** What `needsApproval` was given. */
  approvalInputs: unknown[];
  /** What the tool guardrails were given (input: the call's arguments; output: the output). */
  guardrailInputs: unknown[];
  interruptions: string[];
  /** What the model was told each call gave. */
  toolOutputs: unknown[];
  /** The final output, or the name of the error `run()` rejected with. */
  end: unknown;
}

type Wrap = (tool: FunctionTool<any, any, any>) => FunctionTool<any, any, any>;
const unfenced: Wrap = (tool) => tool;
const fenced: Wrap = (tool) =>
  fenceTool(tool, {
    guard: recordingGuard(new MemoryStore()),
    policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['iban', 'amount', 'currency'] },
    runId: 'conversation-1',
  });

function observe(): Observed {
  return {
    paid: [],
    approvalInputs: [],
    guardrailInputs: [],
    interruptions: [],
    toolOutputs: [],
    end: undefined,
  };
}

function payoutTool(observed: Observed, options: PayoutOptions = {}) {
  return tool({
    name: 'pay_out',
    description: 'Pay an amount to an IBAN.',
    parameters: payoutSchema,
    execute: async ({ iban, amount, currency }) => {
      if (amount <= 0) throw new Error(`amount must be positive, got ${amount}`);
      observed.paid.push(`${iban} ${amount} ${currency}`);
      return `paid ${amount} ${currency}`;
    },
    ...options,
  });
}

/** The model's raw call: spaces, lower case, an amount as a string, no currency. */
const payout = (id: string, iban = HIGH_RISK_IBAN, amount = '9000'): Call => ({
  name: 'pay_out',
  args: { iban: ` ${iban.toLowerCase()} `, amount },
  id,
});

function record(observed: Observed, result: RunResult<any, any>) {
  observed.interruptions.push(...result.interruptions.map((item) => item.name ?? ''));
  for (const item of result.newItems) {
    if (item.type === 'tool_call_output_item') observed.toolOutputs.push(item.output);
  }
  observed.end = result.interruptions.length > 0 ? 'interrupted' : result.finalOutput;
}

/**
 * Run the same agent unfenced and fenced; `approve` says what to do with each interruption
 * (approve, reject) before resuming. Returns both observations.
 */
async function bothWays(
  turns: ReadonlyArray<ReadonlyArray<Call> | string>,
  build: (observed: Observed) => FunctionTool<any, any, any>,
  approve?: 'approve' | 'reject',
): Promise<[Observed, Observed]> {
  const observations: Observed[] = [];
  for (const wrap of [unfenced, fenced]) {
    const observed = observe();
    const agent = agentWith(scriptedModel(turns), [wrap(build(observed))]);
    try {
      let result = await run(agent, 'Pay the supplier.');
      record(observed, result);
      if (approve !== undefined && result.interruptions.length > 0) {
        for (const item of result.interruptions) {
          if (approve === 'approve') result.state.approve(item);
          else result.state.reject(item);
        }
        result = await run(agent, result.state);
        record(observed, result);
      }
    } catch (error) {
      // The SDK wraps a tool's error: ToolCallError(ToolInputGuardrailTripwireTriggered).
      const inner = (error as { error?: unknown }).error;
      const name = (error as Error).constructor.name;
      observed.end = inner instanceof Error ? `${name}(${inner.constructor.name})` : name;
    }
    observations.push(observed);
  }
  return observations as [Observed, Observed];
}

const normalised = { iban: HIGH_RISK_IBAN, amount: 9000, currency: 'EUR' };

describe('needsApproval (a function) sees the parsed input, fenced as unfenced', () => {
  const highRisk = (observed: Observed) =>
    payoutTool(observed, {
      needsApproval: async (_context, input) => {
        observed.approvalInputs.push(input);
        return input.iban === HIGH_RISK_IBAN;
      },
    });

  it('a normalised high-risk IBAN stops the run for approval; nothing is paid', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], highRisk);
    const expected: Observed = {
      ...observe(),
      approvalInputs: [normalised],
      interruptions: ['pay_out'],
      end: 'interrupted',
    };
    expect(plain).toEqual(expected);
    expect(guarded).toEqual(expected);
  });

  it('approved: the body gets the parsed input once; rejected: it is not entered', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], highRisk, 'approve');
    expect(plain.paid).toEqual([`${HIGH_RISK_IBAN} 9000 EUR`]);
    expect(guarded).toEqual(plain);
    expect(guarded.toolOutputs).toEqual(['paid 9000 EUR']);
    expect(guarded.end).toBe('Done.');

    const [plainRejected, guardedRejected] = await bothWays(
      [[payout('call_1')], 'Done.'],
      highRisk,
      'reject',
    );
    expect(plainRejected.paid).toEqual([]);
    expect(plainRejected.end).toBe('Done.');
    expect(guardedRejected).toEqual(plainRejected);
  });

  it('a policy on a defaulted field: the parsed input needs no approval, the raw one would', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1', LOW_RISK_IBAN, '10')], 'Done.'], (observed) =>
      payoutTool(observed, {
        needsApproval: async (_context, input) => {
          observed.approvalInputs.push(input);
          // The raw call has no currency at all: only the parsed input says EUR.
          return input.currency !== 'EUR';
        },
      }),
    );
    expect(plain).toEqual({
      ...observe(),
      paid: [`${LOW_RISK_IBAN} 10 EUR`],
      approvalInputs: [{ iban: LOW_RISK_IBAN, amount: 10, currency: 'EUR' }],
      toolOutputs: ['paid 10 EUR'],
      end: 'Done.',
    });
    expect(guarded).toEqual(plain);
  });

  it('needsApproval: true pauses every call, fenced as unfenced', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], (observed) =>
      payoutTool(observed, { needsApproval: true }),
    );
    expect(plain).toMatchObject({ interruptions: ['pay_out'], paid: [], end: 'interrupted' });
    expect(guarded).toEqual(plain);
  });
});

describe('tool guardrails see the same call and output, fenced as unfenced', () => {
  it('an input guardrail that rejects the call: the body is not entered, the model gets its message', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], (observed) =>
      payoutTool(observed, {
        inputGuardrails: [
          defineToolInputGuardrail({
            name: 'no_high_risk',
            run: async ({ toolCall }) => {
              observed.guardrailInputs.push(JSON.parse(toolCall.arguments));
              return toolCall.arguments.toUpperCase().includes(HIGH_RISK_IBAN)
                ? ToolGuardrailFunctionOutputFactory.rejectContent('blocked: high-risk IBAN')
                : ToolGuardrailFunctionOutputFactory.allow();
            },
          }),
        ],
      }),
    );
    expect(plain).toEqual({
      ...observe(),
      guardrailInputs: [{ iban: ` ${HIGH_RISK_IBAN.toLowerCase()} `, amount: '9000' }],
      toolOutputs: ['blocked: high-risk IBAN'],
      end: 'Done.',
    });
    expect(guarded).toEqual(plain);
  });

  it('an input guardrail that throws: run() rejects with the SDK tripwire error, nothing paid', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], (observed) =>
      payoutTool(observed, {
        inputGuardrails: [
          defineToolInputGuardrail({
            name: 'tripwire',
            run: async () => ToolGuardrailFunctionOutputFactory.throwException(),
          }),
        ],
      }),
    );
    expect(plain).toEqual({ ...observe(), end: 'ToolCallError(ToolInputGuardrailTripwireTriggered)' });
    expect(guarded).toEqual(plain);
  });

  it("an output guardrail sees the body's output and replaces it; the body ran once", async () => {
    const [plain, guarded] = await bothWays([[payout('call_1', LOW_RISK_IBAN)], 'Done.'], (observed) =>
      payoutTool(observed, {
        outputGuardrails: [
          defineToolOutputGuardrail({
            name: 'redact',
            run: async ({ output }) => {
              observed.guardrailInputs.push(output);
              return ToolGuardrailFunctionOutputFactory.rejectContent('payout done (details withheld)');
            },
          }),
        ],
      }),
    );
    expect(plain).toEqual({
      ...observe(),
      paid: [`${LOW_RISK_IBAN} 9000 EUR`],
      guardrailInputs: ['paid 9000 EUR'],
      toolOutputs: ['payout done (details withheld)'],
      end: 'Done.',
    });
    expect(guarded).toEqual(plain);
  });
});

describe('enablement, parsing and error functions, fenced as unfenced', () => {
  it('isEnabled: false keeps the tool from the model; a call to it ends the run the same way', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], (observed) =>
      payoutTool(observed, { isEnabled: false }),
    );
    expect(plain.paid).toEqual([]);
    expect(plain.end).toBe('ModelBehaviorError');
    expect(guarded).toEqual(plain);
  });

  it('an input the schema refuses: the model gets the same answer, nothing paid', async () => {
    const [plain, guarded] = await bothWays(
      [[payout('call_1', LOW_RISK_IBAN, 'nine thousand')], 'Done.'],
      (observed) => payoutTool(observed),
    );
    expect(plain.paid).toEqual([]);
    expect(plain.toolOutputs).toHaveLength(1);
    expect(plain.end).toBe('Done.');
    expect(guarded).toEqual(plain);
  });

  it("a tool's own errorFunction answers a failed body the same way", async () => {
    const [plain, guarded] = await bothWays([[payout('call_1', LOW_RISK_IBAN, '-5')], 'Done.'], (observed) =>
      payoutTool(observed, {
        errorFunction: (_context, error) => `payout refused: ${(error as Error).message}`,
      }),
    );
    expect(plain).toEqual({
      ...observe(),
      toolOutputs: ['payout refused: amount must be positive, got -5'],
      end: 'Done.',
    });
    expect(guarded).toEqual(plain);
  });
});

describe('a hand-built FunctionTool (no tool(), no SDK parser), fenced as unfenced', () => {
  it('needsApproval gets the JSON arguments and the run pauses the same way', async () => {
    const [plain, guarded] = await bothWays([[payout('call_1')], 'Done.'], (observed) => {
      const handBuilt: FunctionTool<any, any, any> = {
        ...payoutTool(observed),
        needsApproval: async (_context, input) => {
          observed.approvalInputs.push(input);
          return true;
        },
        invoke: async (_context, input) => {
          observed.paid.push(input);
          return 'paid';
        },
      };
      return handBuilt;
    });
    expect(plain).toEqual({
      ...observe(),
      approvalInputs: [{ iban: ` ${HIGH_RISK_IBAN.toLowerCase()} `, amount: '9000' }],
      interruptions: ['pay_out'],
      end: 'interrupted',
    });
    expect(guarded).toEqual(plain);
  });
});

describe('the key is made of the parsed input', () => {
  it('the same payout spelt two ways by the model runs once', async () => {
    const observed = observe();
    const agent = agentWith(
      scriptedModel([
        [
          payout('call_1', LOW_RISK_IBAN),
          { ...payout('call_2', LOW_RISK_IBAN), args: { iban: LOW_RISK_IBAN, amount: 9000 } },
        ],
        'Done.',
      ]),
      [fenced(payoutTool(observed))],
    );
    const result = await run(agent, 'Pay the supplier.');
    record(observed, result);
    expect(observed.paid).toEqual([`${LOW_RISK_IBAN} 9000 EUR`]);
    expect(observed.toolOutputs).toEqual(['paid 9000 EUR', 'paid 9000 EUR']);
  });
});
