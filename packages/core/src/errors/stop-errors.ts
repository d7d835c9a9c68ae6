import { ApprovalDeniedError } from './approval-denied-error.js';
import { ApprovalRequiredError } from './approval-required-error.js';
import { ExecutionAbandonedError } from './execution-abandoned-error.js';
import { IndeterminateOutcomeError } from './indeterminate-outcome-error.js';

/**
 * The error of one call after which a run must not go on: the outcome of an EFFECTFUL call is
 * unknown ({@link IndeterminateOutcomeError}), or an IDEMPOTENT one was abandoned
 * ({@link ExecutionAbandonedError}), or the call waits for an operator's approval
 * ({@link ApprovalRequiredError}) or was denied ({@link ApprovalDeniedError}). Retrying is exactly what must not happen, so the adapters do
 * not treat them as ordinary tool errors (docs/guarantee.md). It is the one name every adapter
 * uses for a stop.
 *
 * `StepStoppedError` is not a member: no call throws it. It stands for several stops of one step,
 * so what stopped a run (`findStopError`, each adapter's `stopErrorOf`) is
 * `CallStopError | StepStoppedError`, and `StepStoppedError.callsOf(stop)` lists the calls of
 * either.
 */
export type CallStopError =
  | IndeterminateOutcomeError
  | ExecutionAbandonedError
  | ApprovalRequiredError
  | ApprovalDeniedError;

/**
 * What an adapter does with a {@link CallStopError}, its `onIndeterminate` option in every
 * adapter that offers the choice: `'throw'` (the default) ends the run with the error;
 * `'report'` answers the model with {@link stopReport} instead.
 */
export type StopMode = 'throw' | 'report';

/**
 * True for an {@link IndeterminateOutcomeError}, an {@link ExecutionAbandonedError}, an
 * {@link ApprovalRequiredError} or an {@link ApprovalDeniedError}, from any copy of
 * `@toolfence/core` (it uses their `isInstance`).
 */
export function isCallStopError(error: unknown): error is CallStopError {
  return (
    IndeterminateOutcomeError.isInstance(error) ||
    ExecutionAbandonedError.isInstance(error) ||
    ApprovalRequiredError.isInstance(error) ||
    ApprovalDeniedError.isInstance(error)
  );
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
  // Nothing ran for these two: the model must not say the action may have happened.
  if (ApprovalRequiredError.isInstance(error)) {
    return (
      `Tool "${error.tool}" needs an operator's approval and did not run. Do NOT call it again ` +
      `until an operator has decided; tell the user it awaits approval. (toolfence idempotency key ${error.key})`
    );
  }
  if (ApprovalDeniedError.isInstance(error)) {
    return (
      `Tool "${error.tool}" was denied by an operator and did not run. Do NOT call it again; ` +
      `tell the user it was denied. (toolfence idempotency key ${error.key})`
    );
  }
  const why = IndeterminateOutcomeError.isInstance(error)
    ? `its outcome is unknown (${error.reasonType})`
    : `it was abandoned after ${error.attempt} lost attempt(s)`;
  return (
    `Tool "${error.tool}" did not finish cleanly: ${why}. The action may have happened. ` +
    'Do NOT call this tool again to retry it; tell the user the action must be verified ' +
    `before anything else is done about it. (toolfence idempotency key ${error.key})`
  );
}
