import { type CallStopError, findStopError, type StepStoppedError } from '@toolfence/core';

/**
 * The toolfence stop inside whatever the SDK wrapped it in (one call's `CallStopError`, or a
 * `StepStoppedError` for every stop of a step), or `undefined` when there is none.
 *
 * Looks through the value itself, a LangGraph `AggregateError`'s `errors`, `cause` chains
 * (langchain's `MiddlewareError`) and arrays. A {@link StepStoppedError} found anywhere is
 * returned as it is (it lists every stop of its step); a single `IndeterminateOutcomeError` /
 * `ExecutionAbandonedError` is returned itself; several distinct ones are returned as one
 * `StepStoppedError` listing them all (in the order found). The search is core's
 * `findStopError`.
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
export function stopErrorOf(error: unknown): CallStopError | StepStoppedError | undefined {
  return findStopError(error);
}
