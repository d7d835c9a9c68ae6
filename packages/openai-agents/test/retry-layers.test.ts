// Issue #27 item 8, OpenAI Agents: a tool's errorFunction is the SDK's documented way to turn a
// tool's error into text the model reads (and, told "failed", retries). A toolfence stop must
// never go through it: run() rejects, the model is not called again, a retry is not entered.
import { run, tool } from '@openai/agents-core';
import { Guard, type GuardEvent, Idempotency, IndeterminateOutcomeError, MemoryStore } from '@toolfence/core';
import { fenceTool, stopErrorOf } from '@toolfence/openai-agents';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { waitFor } from '../../../test/support/wait-for.js';
import { agentWith, refundCall, scriptedModel } from './support.js';

describe("a tool's own errorFunction never sees a toolfence stop", () => {
  it('a call the guard answers indeterminate (its timeoutMs) rejects run(); errorFunction is not called', async () => {
    const refunds: string[] = [];
    const errorFunctionCalls: unknown[] = [];
    let release: () => void = () => {};
    const providerAnswers = new Promise<void>((resolve) => {
      release = resolve;
    });
    const refund = tool({
      name: 'refund_payment',
      description: 'Refund (part of) an order.',
      parameters: z.object({ orderId: z.string(), amountCents: z.number().int() }),
      // What an app writes to let the model recover from a failed tool: the run would go on.
      errorFunction: (_context, error) => {
        errorFunctionCalls.push(error);
        return `refund failed: ${String(error)}; try again`;
      },
      execute: async ({ orderId }) => {
        refunds.push(orderId);
        // The provider takes the refund, then answers only after the guard's timeout.
        await providerAnswers;
        return 're_1';
      },
    });
    const events: GuardEvent[] = [];
    const guard = new Guard({ store: new MemoryStore(), onEvent: (event) => events.push(event) });
    const startedKey = () => events.find((event) => event.type === 'tool.started')?.key ?? '';
    const fenced = fenceTool(refund, {
      guard,
      policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'], timeoutMs: 50 },
      runId: 'ticket-1',
    });
    const model = scriptedModel([[refundCall('call_1')], [refundCall('call_2')], 'Done.']);
    try {
      const failure = await run(agentWith(model, [fenced]), 'Refund A-100').catch((error: unknown) => error);
      const stop = stopErrorOf(failure);
      expect(IndeterminateOutcomeError.isInstance(stop)).toBe(true);
      expect(stop).toMatchObject({ tool: 'refund_payment', reasonType: 'ToolTimeoutError' });
      // The model was not called again: it never read "refund failed; try again".
      expect(model.calls).toHaveLength(1);
      expect(errorFunctionCalls).toEqual([]);
    } finally {
      release();
    }
    // The provider answers; the first body settles its record.
    await waitFor(
      () => guard.inspect(startedKey()),
      (record) => record?.state === 'completed',
    );

    // The host retries the conversation: the recorded refund, the body not entered again.
    const retryModel = scriptedModel([[refundCall('call_9')], 'Done.']);
    const again = await run(agentWith(retryModel, [fenced]), 'Refund A-100');
    expect(again.finalOutput).toBe('Done.');
    expect(again.newItems.find((item) => item.type === 'tool_call_output_item')?.output).toBe('re_1');
    expect(refunds).toEqual(['A-100']);
    expect(errorFunctionCalls).toEqual([]);
  });
});
