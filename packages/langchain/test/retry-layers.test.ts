// Issue #27 item 8: toolfence's stops survive langchain's own retry layer. An agent that already
// has `toolRetryMiddleware()` (its defaults: 2 retries, retry unless marked non-retryable, then a
// "failed after N attempts" ToolMessage and the run goes on) gets toolfenceMiddleware before or
// after it: an indeterminate refund must end the run, never become a message the model reads
// ("the refund failed") while the refund may have happened.
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { MemorySaver } from '@langchain/langgraph';
import { Idempotency, IndeterminateOutcomeError } from '@toolfence/core';
import { fenceTool, stopErrorOf, toolfenceMiddleware, toolfenceRetryOn } from '@toolfence/langchain';
import { createAgent, createMiddleware, fakeModel, toolRetryMiddleware } from 'langchain';
import { describe, expect, it } from 'vitest';
import { recordingGuard, ticketTool, userMessage } from './support.js';

const effectful = { kind: Idempotency.EFFECTFUL } as const;
const connectionReset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

function toolMessages(messages: unknown[]): ToolMessage[] {
  return messages.filter((message): message is ToolMessage => ToolMessage.isInstance(message));
}

const orders = ['toolfence first (outside the retry)', 'toolfence last (inside the retry)'] as const;

function agentWith(order: (typeof orders)[number], retry = toolRetryMiddleware()) {
  const { guard, types } = recordingGuard();
  // A lost reply: the ticket is created, then the connection drops.
  const { createTicket, effects } = ticketTool({ fail: connectionReset });
  const model = fakeModel()
    .respondWithTools([{ name: 'create_ticket', args: { title: 'Printer' }, id: 'call_1' }])
    .respond(new AIMessage('All done.'));
  const toolfence = toolfenceMiddleware({ guard, policies: { create_ticket: effectful } });
  // Just inside the retry layer: counts each attempt the retry layer makes (the first included).
  const attempts = { count: 0 };
  const probe = createMiddleware({
    name: 'RetryAttempts',
    wrapToolCall: (request, handler) => {
      attempts.count += 1;
      return handler(request);
    },
  });
  const agent = createAgent({
    model,
    tools: [createTicket],
    checkpointer: new MemorySaver(),
    middleware: order === orders[0] ? [toolfence, retry, probe] : [retry, probe, toolfence],
  });
  return { agent, model, effects, types, guard, attempts };
}

describe("langchain's toolRetryMiddleware() (defaults) with toolfenceMiddleware", () => {
  for (const order of orders) {
    it(`${order}: an indeterminate call is not retried and ends the run; the model is not told it failed`, async () => {
      const { agent, model, effects, types, attempts } = agentWith(order);
      const error = await agent
        .invoke(userMessage, { configurable: { thread_id: `retry-${order}` } })
        .catch((caught: unknown) => caught);
      const stop = stopErrorOf(error);
      expect(stop).toBeInstanceOf(IndeterminateOutcomeError);
      expect(stop).toMatchObject({ tool: 'create_ticket', reasonType: 'ECONNRESET' });
      // The body ran once, the guard was asked once: no retry went through it.
      expect(effects).toEqual(['Printer']);
      expect(types('create_ticket')).toEqual(['tool.started', 'tool.indeterminate']);
      // The model was not called again, so it never read "failed after 3 attempts".
      expect(model.callCount).toBe(1);
      // The retry layer made one attempt: it neither retried nor waited out a backoff.
      expect(attempts.count).toBe(1);
    });
  }

  for (const order of orders) {
    it(`${order}: once an operator settles the call, the thread resumes without running it again`, async () => {
      const { agent, model, effects, guard } = agentWith(order);
      const config = { configurable: { thread_id: `resume-${order}` } };
      const stop = stopErrorOf(await agent.invoke(userMessage, config).catch((caught: unknown) => caught));
      expect(stop).toBeInstanceOf(IndeterminateOutcomeError);
      // Resumed before anyone settled it: still stopped, the model still not called.
      expect(stopErrorOf(await agent.invoke(null, config).catch((caught: unknown) => caught))).toMatchObject({
        key: (stop as IndeterminateOutcomeError).key,
      });
      expect(model.callCount).toBe(1);

      await guard.resolve((stop as IndeterminateOutcomeError).key, {
        outcome: 'Ticket T-1 created: Printer',
      });
      const resumed = await agent.invoke(null, config);
      expect(resumed.messages.at(-1)?.content).toBe('All done.');
      expect(effects).toEqual(['Printer']);
      expect(model.callCount).toBe(2);
    });
  }

  it('a tool fenced on its own (its own guard and tenant) inside the retry: refused until settled', async () => {
    const own = recordingGuard();
    const { createTicket, effects } = ticketTool({ fail: connectionReset });
    const fenced = fenceTool(createTicket, { guard: own.guard, policy: effectful, tenant: 'acme' });
    const model = fakeModel()
      .respondWithTools([{ name: 'create_ticket', args: { title: 'Printer' }, id: 'call_1' }])
      .respond(new AIMessage('All done.'));
    const agent = createAgent({
      model,
      tools: [fenced],
      checkpointer: new MemorySaver(),
      // The middleware's guard is another one, with no record of the call.
      middleware: [
        toolRetryMiddleware(),
        toolfenceMiddleware({ guard: recordingGuard().guard, policies: {} }),
      ],
    });
    const config = { configurable: { thread_id: 'own-tenant' } };
    const stop = stopErrorOf(await agent.invoke(userMessage, config).catch((caught: unknown) => caught));
    expect(stop).toBeInstanceOf(IndeterminateOutcomeError);
    expect(model.callCount).toBe(1);
    await own.guard.resolve(
      (stop as IndeterminateOutcomeError).key,
      { outcome: 'Ticket T-1 created: Printer' },
      { tenant: 'acme' },
    );
    expect((await agent.invoke(null, config)).messages.at(-1)?.content).toBe('All done.');
    expect(effects).toEqual(['Printer']);
  });

  it('an ordinary error is still retried by the middleware as before (toolfence refuses stops only)', async () => {
    const { guard } = recordingGuard();
    let attempts = 0;
    const { createTicket } = ticketTool({
      fail: () => (++attempts < 3 ? new Error('ticket system busy') : undefined),
    });
    const model = fakeModel()
      .respondWithTools([{ name: 'create_ticket', args: { title: 'Printer' }, id: 'call_1' }])
      .respond(new AIMessage('All done.'));
    const agent = createAgent({
      model,
      tools: [createTicket],
      middleware: [
        // An IDEMPOTENT tool: a failed call is released, so the retry may run it again.
        toolfenceMiddleware({ guard, policies: { create_ticket: { kind: Idempotency.IDEMPOTENT } } }),
        toolRetryMiddleware({ initialDelayMs: 1, jitter: false }),
      ],
    });
    const result = await agent.invoke(userMessage, { configurable: { thread_id: 'retry-ordinary' } });
    expect(attempts).toBe(3);
    expect(toolMessages(result.messages).map((m) => [m.content, m.status])).toEqual([
      ['Ticket T-3 created: Printer', 'success'],
    ]);
  });
});

describe('toolfenceRetryOn: the retryOn predicate for a retry layer', () => {
  it('refuses a stop (and a stop wrapped in a cause chain), keeps the default for other errors', () => {
    const stop = new IndeterminateOutcomeError({
      key: 'k',
      tool: 'create_ticket',
      attempt: 1,
      fence: 1,
      reasonType: 'ECONNRESET',
      reason: 'socket hang up',
    });
    expect(toolfenceRetryOn(stop)).toBe(false);
    expect(toolfenceRetryOn(new Error('wrapped', { cause: stop }))).toBe(false);
    expect(toolfenceRetryOn(new Error('ticket system busy'))).toBe(true);
    // An error langchain marks non-retryable stays non-retryable.
    const marked = Object.defineProperty(new Error('refused'), Symbol.for('langchain.errors.retryable'), {
      value: false,
    });
    expect(toolfenceRetryOn(marked)).toBe(false);
  });

  it('given to toolRetryMiddleware with a catch-all onFailure, a stop still ends the run', async () => {
    const { agent, effects, model } = agentWith(
      orders[1],
      toolRetryMiddleware({ retryOn: toolfenceRetryOn, onFailure: 'error', initialDelayMs: 1 }),
    );
    const error = await agent
      .invoke(userMessage, { configurable: { thread_id: 'retry-on' } })
      .catch((caught: unknown) => caught);
    expect(stopErrorOf(error)).toBeInstanceOf(IndeterminateOutcomeError);
    expect(effects).toEqual(['Printer']);
    expect(model.callCount).toBe(1);
  });
});
