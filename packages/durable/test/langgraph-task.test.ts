// LangGraph's task() on its own runtime (entrypoint + MemorySaver, offline): two resumes of one
// thread at once both run the pending task. The example (examples/durable/langgraph-task.ts) with
// and without the guard.
import { Command, entrypoint, interrupt, MemorySaver, task } from '@langchain/langgraph';
import { Guard, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { checkoutWorkflow, type Payments } from '../../../examples/durable/langgraph-task.js';

function countingPayments(options: { failAfterCharge?: boolean } = {}) {
  const charges: string[] = [];
  const payments: Payments = {
    async charge(orderId, cents) {
      charges.push(`${orderId}:${cents}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (options.failAfterCharge === true) throw new Error('socket hang up');
      return { id: `ch_${charges.length}` };
    },
  };
  return { charges, payments };
}

const resume = new Command({ resume: true });

describe('a LangGraph task() run by two resumes of one thread at once', () => {
  it('without toolfence: the task body runs twice', async () => {
    const { charges, payments } = countingPayments();
    const chargeCard = task('chargeCard', (orderId: string, cents: number) =>
      payments.charge(orderId, cents, ''),
    );
    const plain = entrypoint(
      { name: 'checkout', checkpointer: new MemorySaver() },
      async ({ orderId, cents }: { orderId: string; cents: number }) => {
        interrupt('approve?');
        return (await chargeCard(orderId, cents)).id;
      },
    );
    const config = { configurable: { thread_id: 'thread-plain' } };
    await plain.invoke({ orderId: 'A-1', cents: 500 }, config);
    await Promise.all([plain.invoke(resume, config), plain.invoke(resume, config)]);
    expect(charges).toEqual(['A-1:500', 'A-1:500']);
  });

  it('with guardStep: one charge, and both resumes return it', async () => {
    const { charges, payments } = countingPayments();
    // Two workers: each its guard, one toolfence store and one checkpointer between them.
    const store = new MemoryStore();
    const checkpointer = new MemorySaver();
    const first = checkoutWorkflow(new Guard({ store }), payments, checkpointer);
    const second = checkoutWorkflow(new Guard({ store }), payments, checkpointer);
    const config = { configurable: { thread_id: 'thread-fenced' } };
    await first.invoke({ orderId: 'A-2', cents: 700 }, config);
    const results = await Promise.all([first.invoke(resume, config), second.invoke(resume, config)]);
    expect(charges).toEqual(['A-2:700']);
    expect(results).toEqual([
      { orderId: 'A-2', charged: true, chargeId: 'ch_1' },
      { orderId: 'A-2', charged: true, chargeId: 'ch_1' },
    ]);
    // Another thread is another run: it charges.
    const other = { configurable: { thread_id: 'thread-other' } };
    await first.invoke({ orderId: 'A-2', cents: 700 }, other);
    await first.invoke(resume, other);
    expect(charges).toHaveLength(2);
  });

  it('a stop is not retried by the task retry policy: the body ran once', async () => {
    const { charges, payments } = countingPayments({ failAfterCharge: true });
    const events: string[] = [];
    const guard = new Guard({ store: new MemoryStore(), onEvent: (event) => events.push(event.type) });
    const workflow = checkoutWorkflow(guard, payments);
    const config = { configurable: { thread_id: 'thread-stop' } };
    await workflow.invoke({ orderId: 'A-3', cents: 900 }, config);
    const failure = await workflow.invoke(resume, config).catch((error: unknown) => error);
    expect(IndeterminateOutcomeError.isInstance(failure)).toBe(true);
    expect(charges).toEqual(['A-3:900']);
    // One guarded call: retryOn turned the retry down (a retry would add a second tool.indeterminate).
    expect(events).toEqual(['tool.started', 'tool.indeterminate']);
  });
});
