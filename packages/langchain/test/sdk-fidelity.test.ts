// A fenced LangChain tool is indistinguishable to langchain's own middleware (issue #27 item 7):
// humanInTheLoopMiddleware (approve, edit, reject) and toolCallLimitMiddleware see and do exactly
// what they do unfenced, with a schema that transforms its input (trim, case, coercion, default).
// Each cell runs the same scripted createAgent unfenced, with fenceTool, and with
// toolfenceMiddleware before and after langchain's middleware, and compares what happened.
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { type StructuredToolInterface, tool } from '@langchain/core/tools';
import { Command, MemorySaver } from '@langchain/langgraph';
import { Guard, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceTool, toolfenceMiddleware } from '@toolfence/langchain';
import {
  type AgentMiddleware,
  createAgent,
  fakeModel,
  humanInTheLoopMiddleware,
  toolCallLimitMiddleware,
} from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const HIGH_RISK_IBAN = 'DE89370400440532013000';

const payoutSchema = z.object({
  iban: z.string().trim().toUpperCase(),
  amount: z.coerce.number(),
  currency: z.string().default('EUR'),
});

interface Observed {
  paid: string[];
  /** What the human was asked about (langchain's action requests). */
  asked: unknown[];
  /** Every ToolMessage the model was sent, as it reads it. */
  toolMessages: unknown[];
  /** The last AI message's text. */
  final: unknown;
}

function payoutTool(observed: Observed) {
  return tool(
    async ({ iban, amount, currency }) => {
      observed.paid.push(`${iban} ${amount} ${currency}`);
      return `paid ${amount} ${currency}`;
    },
    { name: 'pay_out', description: 'Pay an amount to an IBAN.', schema: payoutSchema },
  );
}

/** The model's raw call: spaces, lower case, an amount as a string, no currency. */
const rawArgs = { iban: ` ${HIGH_RISK_IBAN.toLowerCase()} `, amount: '9000' };

type Way = 'unfenced' | 'fenceTool' | 'middleware first' | 'middleware last';
const ways: Way[] = ['unfenced', 'fenceTool', 'middleware first', 'middleware last'];

/** The agent one way: the same tool and langchain middleware, fenced or not. */
function agentFor(way: Way, observed: Observed, langchainMiddleware: AgentMiddleware, calls: number) {
  const guard = new Guard({ store: new MemoryStore() });
  const policies = { pay_out: { kind: Idempotency.EFFECTFUL } };
  const payout: StructuredToolInterface =
    way === 'fenceTool'
      ? fenceTool(payoutTool(observed), { guard, policy: policies.pay_out })
      : payoutTool(observed);
  const toolfence = toolfenceMiddleware({ guard, policies });
  const middleware =
    way === 'middleware first'
      ? [toolfence, langchainMiddleware]
      : way === 'middleware last'
        ? [langchainMiddleware, toolfence]
        : [langchainMiddleware];
  const model = fakeModel()
    .respondWithTools(
      Array.from({ length: calls }, (_, index) => ({
        name: 'pay_out',
        // A different amount per call, so each call is its own key.
        args: { ...rawArgs, amount: String(9000 + index) },
        id: `call_${index + 1}`,
      })),
    )
    .respond(new AIMessage('Done.'));
  return createAgent({ model, tools: [payout], middleware, checkpointer: new MemorySaver() });
}

function record(observed: Observed, result: { messages: unknown[]; __interrupt__?: unknown }) {
  observed.toolMessages = result.messages
    .filter((message): message is ToolMessage => ToolMessage.isInstance(message))
    .map((message) => ({ id: message.tool_call_id, status: message.status, content: message.content }))
    // langchain appends a refused call's message before the answers of the calls it let run.
    .sort((a, b) => a.id.localeCompare(b.id));
  const interrupts = (result.__interrupt__ ?? []) as Array<{ value?: { actionRequests?: unknown[] } }>;
  observed.final = interrupts.length > 0 ? 'interrupted' : (result.messages.at(-1) as AIMessage).content;
  for (const item of interrupts) observed.asked.push(...(item.value?.actionRequests ?? []));
}

async function eachWay(
  langchainMiddleware: () => AgentMiddleware,
  options: { calls?: number; resume?: Command } = {},
): Promise<Record<Way, Observed>> {
  const observations = {} as Record<Way, Observed>;
  for (const way of ways) {
    const observed: Observed = { paid: [], asked: [], toolMessages: [], final: undefined };
    const agent = agentFor(way, observed, langchainMiddleware(), options.calls ?? 1);
    const config = { configurable: { thread_id: `thread-${way}` } };
    record(
      observed,
      await agent.invoke({ messages: [{ role: 'user', content: 'Pay the supplier.' }] }, config),
    );
    if (options.resume !== undefined) record(observed, await agent.invoke(options.resume, config));
    observations[way] = observed;
  }
  return observations;
}

function expectAllTheSame(observations: Record<Way, Observed>, expected: Observed) {
  for (const way of ways) expect({ way, ...observations[way] }).toEqual({ way, ...expected });
}

const askFor = { interruptOn: { pay_out: true }, descriptionPrefix: 'Approve' };

describe('humanInTheLoopMiddleware, fenced as unfenced', () => {
  it('the call pauses for a human who sees the model’s call; nothing is paid', async () => {
    const observations = await eachWay(() => humanInTheLoopMiddleware(askFor));
    expectAllTheSame(observations, {
      paid: [],
      asked: [{ name: 'pay_out', args: rawArgs, description: expect.stringContaining('Approve') }],
      toolMessages: [],
      final: 'interrupted',
    });
  });

  it('approved: the body runs once, with the parsed input', async () => {
    const approve = new Command({ resume: { decisions: [{ type: 'approve' }] } });
    const observations = await eachWay(() => humanInTheLoopMiddleware(askFor), { resume: approve });
    expectAllTheSame(observations, {
      paid: [`${HIGH_RISK_IBAN} 9000 EUR`],
      asked: [expect.objectContaining({ name: 'pay_out', args: rawArgs })],
      toolMessages: [{ id: 'call_1', status: 'success', content: 'paid 9000 EUR' }],
      final: 'Done.',
    });
  });

  it('edited: the body runs once with the edited arguments, parsed by the schema', async () => {
    const edit = new Command({
      resume: {
        decisions: [
          {
            type: 'edit',
            editedAction: { name: 'pay_out', args: { iban: ' fr76 ', amount: '12', currency: 'USD' } },
          },
        ],
      },
    });
    const observations = await eachWay(() => humanInTheLoopMiddleware(askFor), { resume: edit });
    expectAllTheSame(observations, {
      paid: ['FR76 12 USD'],
      asked: [expect.objectContaining({ name: 'pay_out' })],
      toolMessages: [{ id: 'call_1', status: 'success', content: 'paid 12 USD' }],
      final: 'Done.',
    });
  });

  it('rejected: the body is not entered; the model gets the same answer', async () => {
    const reject = new Command({ resume: { decisions: [{ type: 'reject', message: 'Not to that IBAN.' }] } });
    const observations = await eachWay(() => humanInTheLoopMiddleware(askFor), { resume: reject });
    expect(observations.unfenced.paid).toEqual([]);
    expect(observations.unfenced.toolMessages).toEqual([
      { id: 'call_1', status: 'error', content: expect.stringContaining('Not to that IBAN.') },
    ]);
    expectAllTheSame(observations, observations.unfenced);
  });
});

describe('toolCallLimitMiddleware, fenced as unfenced', () => {
  it('a run limit of 1: the first call runs, the second is refused the same way', async () => {
    const observations = await eachWay(() => toolCallLimitMiddleware({ toolName: 'pay_out', runLimit: 1 }), {
      calls: 2,
    });
    expect(observations.unfenced.paid).toEqual([`${HIGH_RISK_IBAN} 9000 EUR`]);
    expect(observations.unfenced.toolMessages).toEqual([
      { id: 'call_1', status: 'success', content: 'paid 9000 EUR' },
      { id: 'call_2', status: 'error', content: expect.stringContaining('limit') },
    ]);
    expectAllTheSame(observations, observations.unfenced);
  });
});
