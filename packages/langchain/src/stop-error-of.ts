import {
  ExecutionAbandonedError,
  IndeterminateOutcomeError,
  StepStoppedError,
  type StoppedToolCall,
} from '@toolfence/core';

/** What stopped a run: one call's stop, or every stop of a step. */
export type StopError = IndeterminateOutcomeError | ExecutionAbandonedError | StepStoppedError;

/**
 * The toolfence stop inside whatever the SDK wrapped it in, or `undefined` when there is none.
 *
 * Looks through the value itself, a LangGraph `AggregateError`'s `errors`, `cause` chains
 * (langchain's `MiddlewareError`) and arrays. A {@link StepStoppedError} found anywhere is
 * returned as it is (it lists every stop of its step); a single `IndeterminateOutcomeError` /
 * `ExecutionAbandonedError` is returned itself; several distinct ones are returned as one
 * `StepStoppedError` listing them all (in the order found).
 *
 * @example
 * ```ts
 * try { await agent.invoke(input, config); } catch (error) {
 *   const stop = stopErrorOf(error);
 *   if (stop === undefined) throw error;
 *   for (const call of StepStoppedError.callsOf(stop)) await alert(call.tool, call.key, call.callId);
 * }
 * ```
 */
export function stopErrorOf(error: unknown): StopError | undefined {
  const found: StoppedToolCall[] = [];
  const step = collectStops(error, found, new Set(), 0);
  if (step !== undefined) return step;
  if (found.length === 0) return undefined;
  if (found.length === 1) return found[0]?.error;
  return new StepStoppedError(found);
}

const MAX_DEPTH = 16;

/** Walk `value`; returns a StepStoppedError as soon as one is met, else fills `found`. */
function collectStops(
  value: unknown,
  found: StoppedToolCall[],
  seen: Set<object>,
  depth: number,
): StepStoppedError | undefined {
  if (typeof value !== 'object' || value === null || seen.has(value) || depth > MAX_DEPTH) return undefined;
  seen.add(value);
  if (StepStoppedError.isInstance(value)) return value;
  if (IndeterminateOutcomeError.isInstance(value) || ExecutionAbandonedError.isInstance(value)) {
    if (!found.some((call) => call.error === value)) {
      found.push({ key: value.key, tool: value.tool, callId: undefined, error: value });
    }
    return undefined;
  }
  const children: unknown[] = [];
  if (Array.isArray(value)) children.push(...value);
  const record = value as { errors?: unknown; cause?: unknown };
  if (Array.isArray(record.errors)) children.push(...record.errors);
  if ('cause' in record) children.push(record.cause);
  for (const child of children) {
    const step = collectStops(child, found, seen, depth + 1);
    if (step !== undefined) return step;
  }
  return undefined;
}
