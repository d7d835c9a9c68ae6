// The stop errors and their model-readable report are core's (isCallStopError, stopReport).
export { isCallStopError as isStopError, stopReport } from '@toolfence/core';

/** What to do when a guarded call ends indeterminate or abandoned. */
export type OnIndeterminate = 'throw' | 'report';

/** LangGraph's `isGraphBubbleUp` (interrupts, parent commands), without importing LangGraph. */
export function isGraphBubbleUp(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { is_bubble_up?: unknown }).is_bubble_up === true
  );
}
