// The stop errors, the stop mode and the model-readable report are core's (CallStopError,
// StopMode, stopReport): every adapter uses the same names and words.
export { isCallStopError, stopReport } from '@toolfence/core';

/** LangGraph's `isGraphBubbleUp` (interrupts, parent commands), without importing LangGraph. */
export function isGraphBubbleUp(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { is_bubble_up?: unknown }).is_bubble_up === true
  );
}
