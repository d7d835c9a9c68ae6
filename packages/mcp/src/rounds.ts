/**
 * Multi round-trip requests (specification 2026-07-28, from the "Multi Round-Trip Requests" SEP
 * of the transports working group): a server may answer a `tools/call` with an incomplete result
 * that asks the client for input; the client then sends the original `tools/call` again, under a
 * new request id, with the answers (`inputResponses`) and the server's opaque `requestState`,
 * and the handler runs again. Such a round is not an outcome: it is never recorded or replayed.
 */

/** Tells an incomplete (`input_required`) result from a final one. */
export type IncompleteResultTest = (result: unknown) => boolean;

/**
 * The default test: an object with `inputRequests` (an object) or `requestState` (a string), the
 * members the SEP defines for an incomplete result, or `resultType: 'input_required'`. A
 * `CallToolResult` never has any of them.
 */
export function isIncompleteResult(result: unknown): boolean {
  if (result === null || typeof result !== 'object') return false;
  const fields = result as { inputRequests?: unknown; requestState?: unknown; resultType?: unknown };
  return (
    (fields.inputRequests !== null && typeof fields.inputRequests === 'object') ||
    typeof fields.requestState === 'string' ||
    fields.resultType === 'input_required'
  );
}

/** True for the `params` of a `tools/call` that retries a round (it carries answers or state). */
export function isRoundRetry(params: unknown): boolean {
  if (params === null || typeof params !== 'object') return false;
  const fields = params as { inputResponses?: unknown; requestState?: unknown };
  return fields.inputResponses !== undefined || fields.requestState !== undefined;
}

const roundMarker = Symbol.for('toolfence.mcp.incompleteRound');

/**
 * What the guard sees in place of an incomplete result: the claim is released (the effect of
 * such a tool happens on the final round only), and the client gets the result itself. Internal.
 */
export class IncompleteRound extends Error {
  readonly [roundMarker] = true;
  readonly result: unknown;
  constructor(tool: string, result: unknown) {
    super(`Tool "${tool}" asked for input: the round is not an outcome`);
    this.name = 'IncompleteRound';
    this.result = result;
  }
  static isInstance(error: unknown): error is IncompleteRound {
    return (
      typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[roundMarker] === true
    );
  }
}
