import { ExecutionAbandonedError, IndeterminateOutcomeError } from '@toolfence/core';

/** What to do when a guarded call ends indeterminate or abandoned. */
export type OnIndeterminate = 'throw' | 'report';

/**
 * The errors that stop a run: the outcome of an effectful call is unknown, or an idempotent one
 * was abandoned. Retrying is exactly what must not happen, so they are not ordinary tool errors.
 */
export function isStopError(error: unknown): error is IndeterminateOutcomeError | ExecutionAbandonedError {
  return IndeterminateOutcomeError.isInstance(error) || ExecutionAbandonedError.isInstance(error);
}

/**
 * The model-readable text for a stop error (`onIndeterminate: 'report'`): names the tool, says
 * the action may have happened and must not be retried.
 */
export function stopReport(error: IndeterminateOutcomeError | ExecutionAbandonedError): string {
  const why = IndeterminateOutcomeError.isInstance(error)
    ? `its outcome is unknown (${error.reasonType})`
    : `it was abandoned after ${error.attempt} lost attempt(s)`;
  return (
    `Tool "${error.tool}" did not finish cleanly: ${why}. The action may have happened. ` +
    'Do NOT call this tool again to retry it; tell the user the action must be verified ' +
    `before anything else is done about it. (toolfence idempotency key ${error.key})`
  );
}

/** LangGraph's `isGraphBubbleUp` (interrupts, parent commands), without importing LangGraph. */
export function isGraphBubbleUp(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { is_bubble_up?: unknown }).is_bubble_up === true
  );
}
