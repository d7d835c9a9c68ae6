import { ExecutionAbandonedError } from './execution-abandoned-error.js';
import { IndeterminateOutcomeError } from './indeterminate-outcome-error.js';

/**
 * The error of one call after which a run must not go on: the outcome of an EFFECTFUL call is
 * unknown ({@link IndeterminateOutcomeError}), or an IDEMPOTENT one was abandoned
 * ({@link ExecutionAbandonedError}). Retrying is exactly what must not happen, so the adapters do
 * not treat them as ordinary tool errors (docs/guarantee.md). It is the one name every adapter
 * uses for a stop.
 *
 * `StepStoppedError` is not a member: no call throws it. It stands for several stops of one step,
 * so what stopped a run (`findStopError`, each adapter's `stopErrorOf`) is
 * `CallStopError | StepStoppedError`, and `StepStoppedError.callsOf(stop)` lists the calls of
 * either.
 */
export type CallStopError = IndeterminateOutcomeError | ExecutionAbandonedError;

/**
 * What an adapter does with a {@link CallStopError}, its `onIndeterminate` option in every
 * adapter that offers the choice: `'throw'` (the default) ends the run with the error;
 * `'report'` answers the model with {@link stopReport} instead.
 */
export type StopMode = 'throw' | 'report';

/**
 * True for an {@link IndeterminateOutcomeError} or an {@link ExecutionAbandonedError}, from any
 * copy of `@toolfence/core` (it uses their `isInstance`).
 */
export function isCallStopError(error: unknown): error is CallStopError {
  return IndeterminateOutcomeError.isInstance(error) || ExecutionAbandonedError.isInstance(error);
}

/**
 * The model-readable text an adapter answers with for a stop error when it is told to report
 * rather than throw (`onIndeterminate: 'report'`): names the tool, says the action may have
 * happened, must not be retried and must be verified, and gives the idempotency key. Every
 * adapter uses these same words.
 *
 * @example
 * ```ts
 * try { return await guard.run(call, body); } catch (error) {
 *   if (isCallStopError(error)) return stopReport(error);
 *   throw error;
 * }
 * ```
 */
export function stopReport(error: CallStopError): string {
  const why = IndeterminateOutcomeError.isInstance(error)
    ? `its outcome is unknown (${error.reasonType})`
    : `it was abandoned after ${error.attempt} lost attempt(s)`;
  return (
    `Tool "${error.tool}" did not finish cleanly: ${why}. The action may have happened. ` +
    'Do NOT call this tool again to retry it; tell the user the action must be verified ' +
    `before anything else is done about it. (toolfence idempotency key ${error.key})`
  );
}
