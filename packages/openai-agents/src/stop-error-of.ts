import { type CallStopError, isCallStopError } from '@toolfence/core';

/**
 * The toolfence `IndeterminateOutcomeError` or `ExecutionAbandonedError` inside an error a run
 * ended with, or `undefined`. The SDK wraps an error thrown by a tool: `run()` rejects with a
 * `ToolCallError` whose `error` is the tool's error (and whose `state` is the `RunState` to
 * resume from). This looks at the error itself, then follows `error` and `cause` (a few levels,
 * cycles ignored), so it also finds the error under a nested agent's run or your own wrapper.
 *
 * @example
 * ```ts
 * try { await run(agent, input); } catch (error) {
 *   const stop = stopErrorOf(error);
 *   if (stop === undefined) throw error;
 *   await guard.resolve(stop.key, { released: true }); // after checking the provider
 * }
 * ```
 */
export function stopErrorOf(error: unknown): CallStopError | undefined {
  const seen = new Set<object>();
  const queue: unknown[] = [error];
  // ToolCallError keeps the tool's error as `error`; standard wrappers use `cause`.
  while (queue.length > 0 && seen.size < 16) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    if (isCallStopError(current)) return current;
    seen.add(current);
    const wrapper = current as { error?: unknown; cause?: unknown };
    queue.push(wrapper.error, wrapper.cause);
  }
  return undefined;
}
