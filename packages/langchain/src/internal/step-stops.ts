// The calls of one agent step, held together so a step with several stops reports them all
// (toolfence-middleware.ts uses it for every call it wraps).
import {
  type ExecutionAbandonedError,
  type IndeterminateOutcomeError,
  StepStoppedError,
  type StoppedToolCall,
} from '@toolfence/core';
// Types only: `langchain` is an optional peer.
import type { ToolCallRequest } from 'langchain';
import { markNotRetryable } from '../retry-on.js';
import { isCallStopError } from './stop-errors.js';

/** One call of a step as it passes the middleware (see {@link StepStops}). */
export interface StepEntry {
  /**
   * The tool as this call invokes it: a stop it throws is held back until every call of the
   * step in flight has settled, then thrown as the step's one error, marked non-retryable for
   * langchain's retry middleware. Thrown from inside the tool, so langchain passes it through
   * (it wraps only a middleware's own errors). `outcome` hears of each attempt's end.
   */
  watch(tool: { invoke: unknown }, outcome: CallOutcome): object;
  /** The call is done (idempotent). */
  leave(): void;
}

interface OpenStep {
  inFlight: number;
  readonly stops: StoppedToolCall[];
  readonly order: readonly string[];
  readonly settled: Promise<void>;
  readonly settle: () => void;
  error?: Error;
}

/**
 * The calls of one agent step run concurrently (a LangGraph task each). When one fails,
 * LangGraph aborts the others and keeps only the first error, so the caller would learn of one
 * stop only. The middleware holds a stopped call back until every call of its step in flight has
 * settled; then every stopped call throws the same error: the stop itself when it is the only
 * one, else a `StepStoppedError` listing them all in the model's call order.
 */
export class StepStops {
  private readonly open = new Map<string, OpenStep>();

  enter(request: ToolCallRequest): StepEntry {
    const { id, order } = stepOf(request);
    let step = this.open.get(id);
    if (step === undefined) {
      let settle = () => {};
      const settled = new Promise<void>((resolve) => {
        settle = resolve;
      });
      step = { inFlight: 0, stops: [], order, settled, settle };
      this.open.set(id, step);
    }
    const entry = step;
    entry.inFlight += 1;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      entry.inFlight -= 1;
      if (entry.inFlight === 0) {
        if (this.open.get(id) === entry) this.open.delete(id);
        entry.settle();
      }
    };
    const callId = request.toolCall.id;
    const stopped = async (error: IndeterminateOutcomeError | ExecutionAbandonedError): Promise<Error> => {
      entry.stops.push({ key: error.key, tool: error.tool, callId, error });
      // Let the step's other calls, started in the same tick, reach the middleware first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      leave();
      await entry.settled;
      if (entry.error === undefined) {
        const rank = (call: StoppedToolCall) => entry.order.indexOf(call.callId ?? '');
        const stops = [...entry.stops].sort((a, b) => rank(a) - rank(b));
        entry.error = stops.length === 1 ? (stops[0] as StoppedToolCall).error : new StepStoppedError(stops);
      }
      return entry.error;
    };
    return {
      leave,
      watch: (tool, outcome) =>
        Object.create(tool, {
          invoke: {
            value: async (input: unknown, config: unknown) => {
              let result: unknown;
              try {
                result = await (tool.invoke as (input: unknown, config: unknown) => Promise<unknown>).call(
                  tool,
                  input,
                  config,
                );
              } catch (error) {
                if (!isCallStopError(error)) throw error;
                const stop = markNotRetryable(await stopped(markNotRetryable(error)));
                outcome.stopped(stop);
                throw stop;
              }
              outcome.settled();
              return result;
            },
          },
        }),
    };
  }
}

/** What a call's tool tells its middleware call about each attempt. */
export interface CallOutcome {
  /** The attempt threw this stop (the step's error). */
  stopped(error: Error): void;
  /** The attempt returned: the call is no longer stopped. */
  settled(): void;
}

/** The step a tool call belongs to: the AI message that made it (its call ids), in its thread. */
function stepOf(request: ToolCallRequest): { id: string; order: string[] } {
  const callId = request.toolCall.id;
  const messages = (request.state as { messages?: unknown } | undefined)?.messages;
  const thread = String(
    (request.runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable?.thread_id ??
      '',
  );
  if (callId !== undefined && Array.isArray(messages)) {
    for (let index = messages.length - 1; index >= 0; index--) {
      const calls = (messages[index] as { tool_calls?: Array<{ id?: string }> } | undefined)?.tool_calls;
      if (Array.isArray(calls) && calls.some((call) => call.id === callId)) {
        const order = calls.map((call) => call.id ?? '');
        return { id: JSON.stringify([thread, index, order]), order };
      }
    }
  }
  return { id: JSON.stringify([thread, 'call', callId ?? Math.random()]), order: [] };
}
