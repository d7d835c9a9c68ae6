// The errors after which a run must not go on: the guard's IndeterminateOutcomeError and
// ExecutionAbandonedError (core's isCallStopError).
import {
  type ExecutionAbandonedError,
  type IndeterminateOutcomeError,
  isCallStopError,
} from '@toolfence/core';

/** The error after which no further step of the run may go on. */
export type StoppingError = IndeterminateOutcomeError | ExecutionAbandonedError;

/** True for the errors after which the run must not go on. */
export function isStoppingError(error: unknown): error is StoppingError {
  return isCallStopError(error);
}
