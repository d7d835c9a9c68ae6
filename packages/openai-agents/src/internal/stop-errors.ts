import { ExecutionAbandonedError, IndeterminateOutcomeError } from '@toolfence/core';

/** What to do when a guarded call ends indeterminate or abandoned. */
export type OnIndeterminate = 'throw' | 'report';

/** The errors after which the run must not go on: retrying is exactly what must not happen. */
export type StopError = IndeterminateOutcomeError | ExecutionAbandonedError;

/** True for an {@link IndeterminateOutcomeError} or an {@link ExecutionAbandonedError}. */
export function isStopError(error: unknown): error is StopError {
  return IndeterminateOutcomeError.isInstance(error) || ExecutionAbandonedError.isInstance(error);
}

/**
 * The model-readable text for a stop error (`onIndeterminate: 'report'`): names the tool, says
 * the action may have happened and must not be retried. The same words as the other adapters.
 */
export function stopReport(error: StopError): string {
  const why = IndeterminateOutcomeError.isInstance(error)
    ? `its outcome is unknown (${error.reasonType})`
    : `it was abandoned after ${error.attempt} lost attempt(s)`;
  return (
    `Tool "${error.tool}" did not finish cleanly: ${why}. The action may have happened. ` +
    'Do NOT call this tool again to retry it; tell the user the action must be verified ' +
    `before anything else is done about it. (toolfence idempotency key ${error.key})`
  );
}
