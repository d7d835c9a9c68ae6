import { type CallStopError, findStopError, type StepStoppedError } from '@toolfence/core';

/**
 * The toolfence stop inside an error a step, an activity or a run failed with, or `undefined`:
 * the engine's non-retryable error keeps it as `cause` (`FatalError`, `NonRetriableError`,
 * `TerminalError`, `ApplicationFailure`), and the engine may wrap that again (a run's failure,
 * Temporal's `ActivityFailure`). Follows `cause` chains, array items and `AggregateError`s.
 */
export function stopErrorOf(error: unknown): CallStopError | StepStoppedError | undefined {
  return findStopError(error);
}
