import { type CallStopError, isCallStopError } from '@toolfence/core';

// The model-readable report is core's: the same words as the other adapters.
export { stopReport } from '@toolfence/core';

/** What to do when a guarded call ends indeterminate or abandoned. */
export type OnIndeterminate = 'throw' | 'report';

/** The errors after which the run must not go on: retrying is exactly what must not happen. */
export type StopError = CallStopError;

/** True for an `IndeterminateOutcomeError` or an `ExecutionAbandonedError`. */
export function isStopError(error: unknown): error is StopError {
  return isCallStopError(error);
}
