// Single-use approvals through the AI SDK's own flow (needsApproval, tool-approval-request and
// -response parts): the server records the user's decision with recordApprovals, the fenced
// execute consumes it with its claim. The SDK's approvals alone live in client-held messages,
// which a client can resubmit, edit or flip; these tests show what the store adds.
import { currentToolCall, Guard, type GuardEvent, Idempotency, MemoryStore } from '@toolfence/core';
import { fenceTools, recordApprovals, toolfenceContext } from '@toolfence/vercel-ai';
import { generateText, type ModelMessage, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../../test/support/scripted-model.js';

/**
 * The tenant and run id of the request being served: the fenced tools read them through
 * resolvers (the same on AI SDK 6 and 7, whose per-call contexts differ), so a test switches them
 * between requests as a server would per request.
 */
const current: { runId: string; tenant: string | undefined } = { runId: 'conversation-1', tenant: undefined };
const serving = (runId = 'conversation-1', tenant?: string) => {
  current.runId = runId;
  current.tenant = tenant;
};

function setup(options: { approval?: boolean } = {}) {
  serving();
  const events: GuardEvent[] = [];
  const guard = new Guard({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
  const bookings: Array<{ seat: string; key: string | undefined }> = [];
  const tools = fenceTools(
    {
      bookSeat: tool({
        inputSchema: z.object({ seat: z.string() }),
        needsApproval: true,
        execute: async ({ seat }) => {
          bookings.push({ seat, key: currentToolCall()?.idempotencyKey });
          // Long enough for a concurrent resume to find the claim held.
          await new Promise((resolve) => setTimeout(resolve, 30));
          return `Booked ${seat}`;
        },
      }),
    },
    {
      guard,
      runId: () => current.runId,
      tenant: () => current.tenant,
      policies: {
        bookSeat: {
          kind: Idempotency.EFFECTFUL,
          ...(options.approval === false ? {} : { approval: 'required' as const }),
        },
      },
    },
  );
  return { guard, tools, bookings, events };
}

type Tools = ReturnType<typeof setup>['tools'];

/** The first run: the model calls bookSeat, the SDK asks for approval (nothing runs). */
async function askForApproval(tools: Tools, seat = '3F') {
  const prompt: ModelMessage[] = [{ role: 'user', content: `book ${seat}` }];
  const result = await generateText({
    model: scriptedModel([[{ toolName: 'bookSeat', input: { seat }, toolCallId: 'call_1' }], 'after']),
    tools,
    messages: prompt,
    stopWhen: stepCountIs(5),
  });
  const request = result.content.find((part) => part.type === 'tool-approval-request');
  return { messages: [...prompt, ...result.response.messages], approvalId: request?.approvalId as string };
}

const response = (approvalId: string, approved: boolean): ModelMessage => ({
  role: 'tool',
  content: [{ type: 'tool-approval-response', approvalId, approved }],
});

/** The conversation with its tool call's input replaced (a client editing its copy). */
function withInput(messages: readonly ModelMessage[], input: Record<string, unknown>): ModelMessage[] {
  return messages.map((message) =>
    message.role !== 'assistant' || typeof message.content === 'string'
      ? message
      : {
          ...message,
          content: message.content.map((part) => (part.type === 'tool-call' ? { ...part, input } : part)),
        },
  );
}

/** Resume the conversation; returns what the model was sent for call_1 (output type and value). */
async function resume(tools: Tools, messages: ModelMessage[]) {
  const model = scriptedModel(['ok']);
  await generateText({ model, tools, messages, stopWhen: stepCountIs(5) });
  for (const message of model.doGenerateCalls[0]?.prompt ?? []) {
    if (message.role !== 'tool') continue;
    for (const part of message.content as Array<{ type: string; toolCallId?: string; output?: unknown }>) {
      if (part.type === 'tool-result' && part.toolCallId === 'call_1') {
        return part.output as { type: string; value: unknown };
      }
    }
  }
  return undefined;
}

describe('recordApprovals: single-use approvals through needsApproval', () => {
  it('two concurrent resumes with the same approval: one booking, both get its result', async () => {
    const { tools, bookings, events } = setup();
    const pending = await askForApproval(tools);
    const messages = [...pending.messages, response(pending.approvalId, true)];
    // Each resume is its own authenticated request; each records the decision it carries.
    const [first, second] = await Promise.all(
      [1, 2].map(async () => {
        const recorded = await recordApprovals(tools, {
          messages,
          by: 'user-7',
        });
        expect(recorded.map((entry) => [entry.toolCallId, entry.approved, entry.status])).toEqual([
          ['call_1', true, 'decided'],
        ]);
        return resume(tools, messages);
      }),
    );
    expect(bookings.map((booking) => booking.seat)).toEqual(['3F']);
    expect(first).toEqual({ type: 'text', value: 'Booked 3F' });
    expect(second).toEqual({ type: 'text', value: 'Booked 3F' });
    const consumed = events.filter((event) => event.type === 'tool.approval_consumed');
    expect(consumed.map((event) => event.approval)).toEqual([{ approved: true, by: 'user-7' }]);
  });

  it('an approval replayed after completion replays the outcome and runs nothing', async () => {
    const { tools, bookings } = setup();
    const pending = await askForApproval(tools);
    const messages = [...pending.messages, response(pending.approvalId, true)];
    await recordApprovals(tools, { messages });
    expect(await resume(tools, messages)).toEqual({ type: 'text', value: 'Booked 3F' });
    const again = await recordApprovals(tools, { messages });
    expect(again.map((entry) => entry.status)).toEqual(['consumed']);
    expect(await resume(tools, messages)).toEqual({ type: 'text', value: 'Booked 3F' });
    expect(bookings).toHaveLength(1);
  });

  it('an approval for other arguments is refused: the edited call stops, unapproved, and nothing runs', async () => {
    const { tools, bookings } = setup();
    const pending = await askForApproval(tools);
    // The server records the decision on its own copy of the conversation (seat 3F) ...
    await recordApprovals(tools, {
      messages: [...pending.messages, response(pending.approvalId, true)],
    });
    // ... and the client resubmits its copy with the call's input edited to another seat.
    const forged = [...withInput(pending.messages, { seat: '1A' }), response(pending.approvalId, true)];
    const output = await resume(tools, forged);
    expect(output?.type).toBe('error-text');
    expect(String(output?.value)).toContain("needs an operator's approval");
    expect(bookings).toEqual([]);
  });

  it('without the store, the same edited resubmission runs the tool on the SDK approval alone', async () => {
    // The gap the store closes: the SDK's approval lives in client-held messages.
    const { tools, bookings } = setup({ approval: false });
    const pending = await askForApproval(tools);
    const forged = [...withInput(pending.messages, { seat: '1A' }), response(pending.approvalId, true)];
    expect(await resume(tools, forged)).toEqual({ type: 'text', value: 'Booked 1A' });
    expect(bookings.map((booking) => booking.seat)).toEqual(['1A']);
  });

  it('an approval recorded for one tenant or run does not authorise the call of another', async () => {
    const { tools, bookings } = setup();
    const pending = await askForApproval(tools);
    const messages = [...pending.messages, response(pending.approvalId, true)];
    serving('conversation-1', 'acme');
    await recordApprovals(tools, { messages });
    serving('conversation-1', 'globex');
    const otherTenant = await resume(tools, messages);
    serving('conversation-2', 'acme');
    const otherRun = await resume(tools, messages);
    for (const output of [otherTenant, otherRun]) expect(output?.type).toBe('error-text');
    expect(bookings).toEqual([]);
    serving('conversation-1', 'acme');
    expect(await resume(tools, messages)).toEqual({ type: 'text', value: 'Booked 3F' });
  });

  it('a denial is recorded and stays one: the same call resubmitted as approved does not run', async () => {
    const { tools, bookings, guard } = setup();
    const pending = await askForApproval(tools);
    const denied = [...pending.messages, response(pending.approvalId, false)];
    const recorded = await recordApprovals(tools, {
      messages: denied,
      by: 'user-7',
    });
    expect(recorded.map((entry) => [entry.approved, entry.status])).toEqual([[false, 'decided']]);
    expect((await resume(tools, denied))?.type).toBe('execution-denied');

    const flipped = [...pending.messages, response(pending.approvalId, true)];
    const again = await recordApprovals(tools, { messages: flipped });
    expect(again.map((entry) => entry.status)).toEqual(['denied']);
    const output = await resume(tools, flipped);
    expect(output?.type).toBe('error-text');
    expect(String(output?.value)).toContain('was denied by an operator');
    expect(bookings).toEqual([]);
    const pendingApprovals = await guard.approvals({ states: ['denied'] });
    expect(pendingApprovals.records.map((record) => [record.tool, record.approval?.by])).toEqual([
      ['bookSeat', 'user-7'],
    ]);
  });

  it('the SDK approval without a recorded decision runs nothing (fail closed) and is listed for operators', async () => {
    const { tools, bookings, guard } = setup();
    const pending = await askForApproval(tools);
    const output = await resume(tools, [...pending.messages, response(pending.approvalId, true)]);
    expect(output?.type).toBe('error-text');
    expect(bookings).toEqual([]);
    const listed = await guard.approvals();
    expect(listed.records.map((record) => [record.tool, record.callId])).toEqual([['bookSeat', 'call_1']]);
  });

  it('skips tools without an approval policy and messages without responses', async () => {
    const { tools } = setup({ approval: false });
    const pending = await askForApproval(tools);
    expect(
      await recordApprovals(tools, {
        messages: [...pending.messages, response(pending.approvalId, true)],
      }),
    ).toEqual([]);
    const { tools: approvalTools } = setup();
    expect(await recordApprovals(approvalTools, { messages: pending.messages })).toEqual([]);
  });

  it("takes the run's tenant and run id from experimental_context (AI SDK 6) or toolsContext (AI SDK 7)", async () => {
    const { tools } = setup();
    const pending = await askForApproval(tools);
    const messages = [...pending.messages, response(pending.approvalId, true)];
    const guard = new Guard({ store: new MemoryStore() });
    const byContext = fenceTools(
      { bookSeat: tool({ inputSchema: z.object({ seat: z.string() }), execute: async () => 'booked' }) },
      { guard, policies: { bookSeat: { kind: Idempotency.EFFECTFUL, approval: 'required' } } },
    );
    await recordApprovals(byContext, {
      messages,
      experimental_context: toolfenceContext({ runId: 'run-6', tenant: 'acme' }),
    });
    await recordApprovals(byContext, {
      messages,
      toolsContext: { bookSeat: toolfenceContext({ runId: 'run-7', tenant: 'acme' }) },
    });
    const approved = await guard.approvals({ states: ['approved'], tenant: 'acme' });
    expect(approved.records.map((record) => record.runId).sort()).toEqual(['run-6', 'run-7']);
  });
});
