import { OutcomePendingError, StoreUnavailableError, ToolfenceError } from '@toolfence/core';
import type { ToolResultLike } from './stopped-result.js';

/**
 * The `_meta` field of an `isError` result in which a guarded server states that it did NOT run
 * the tool (its store was unavailable, the key was in conflict or still running elsewhere, the
 * key was malformed): `{ code, retryable, tool }`. A reverse-DNS prefix, as the specification
 * asks of `_meta` names that are not its own.
 */
export const NOT_RUN_META = 'io.toolfence/notRun';

/** What a guarded server puts in `_meta["io.toolfence/notRun"]` of a call it refused before running it. */
export interface NotRunBody {
  /**
   * Why: a toolfence error code (`STORE_UNAVAILABLE`, `OUTCOME_PENDING`, `IDEMPOTENCY_CONFLICT`,
   * `KEY_DERIVATION_FAILED`, `INVALID_POLICY`, …) or `INVALID_IDEMPOTENCY_KEY` (a malformed or
   * contradictory client key).
   */
  readonly code: string;
  /**
   * True when the same call may succeed later unchanged (the store came back, the holder
   * finished); false when only a changed call can (another key, other arguments).
   */
  readonly retryable: boolean;
  /** The tool that was asked for and not run. */
  readonly tool: string;
}

const notRunMarker = Symbol.for('toolfence.mcp.notRun');

/**
 * A guarded MCP server answered that it did not run the tool (its result carried
 * `_meta["io.toolfence/notRun"]`): nothing happened on the server and nothing was recorded there,
 * so the same call with the same key may be sent again. `fenceMcpClient`'s `callTool` rejects
 * with it instead of returning the `isError` result, so a guarded client call does not record the
 * refusal as its outcome: an IDEMPOTENT client policy releases its claim by itself; an EFFECTFUL
 * one does when its `isNoEffectError` accepts this error (every policy from
 * {@link mcpToolPolicies} does; {@link isMcpServerNotRunError} for a policy of your own).
 *
 * The message names the server, tool and code only: the server's text (which may name its store)
 * is not copied.
 */
export class McpServerNotRunError extends Error {
  readonly [notRunMarker] = true;
  /** The server's reason, see {@link NotRunBody.code}. */
  readonly code: string;
  /** See {@link NotRunBody.retryable}. */
  readonly retryable: boolean;
  /** The tool the server did not run. */
  readonly tool: string;
  /** The server's name (from its `initialize` answer), when known. */
  readonly server: string | undefined;

  constructor(body: NotRunBody, server: string | undefined) {
    const where = server === undefined ? 'The MCP server' : `MCP server "${server}"`;
    super(
      `${where} did not run tool "${body.tool}" (${body.code}; ${body.retryable ? 'retryable' : 'not retryable as is'}): nothing happened, nothing was recorded`,
    );
    this.name = 'McpServerNotRunError';
    this.code = body.code;
    this.retryable = body.retryable;
    this.tool = body.tool;
    this.server = server;
  }

  /** True for this error from any copy of the package (a `Symbol.for` marker, not `instanceof`). */
  static isInstance(error: unknown): error is McpServerNotRunError {
    return (
      typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[notRunMarker] === true
    );
  }
}

/**
 * True for {@link McpServerNotRunError}: for an EFFECTFUL client policy's `isNoEffectError`, so a
 * server's refusal releases the client's claim instead of making the call indeterminate.
 * Only sound when the guarded body's other effects are themselves deduplicated by key (every
 * `callTool` of a fenced client is: a retry of the body replays them on their servers).
 */
export function isMcpServerNotRunError(error: unknown): boolean {
  return McpServerNotRunError.isInstance(error);
}

/** The not-run body of a result, or `undefined` for any other result. */
export function notRunOf(result: unknown): NotRunBody | undefined {
  if (result === null || typeof result !== 'object') return undefined;
  const { isError, _meta } = result as ToolResultLike;
  if (isError !== true || _meta === null || typeof _meta !== 'object') return undefined;
  const body = _meta[NOT_RUN_META] as Partial<NotRunBody> | null | undefined;
  if (body === null || typeof body !== 'object') return undefined;
  if (typeof body.code !== 'string' || typeof body.tool !== 'string') return undefined;
  return { code: body.code, retryable: body.retryable === true, tool: body.tool };
}

/** A client key the server refuses before claiming anything: malformed, or two that disagree. */
export class InvalidClientKeyError extends TypeError {
  /** The `code` of the "not run" answer it becomes. */
  readonly code = 'INVALID_IDEMPOTENCY_KEY';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidClientKeyError';
  }
}

/** The not-run body of an error the server got before running the body, or `undefined`. */
export function notRunBodyOf(error: unknown, tool: string): NotRunBody | undefined {
  if (error instanceof InvalidClientKeyError) return { code: error.code, retryable: false, tool };
  if (!ToolfenceError.isInstance(error)) return undefined;
  // Transient: the same call can succeed once the store is back or the holder has finished.
  const retryable = StoreUnavailableError.isInstance(error) || OutcomePendingError.isInstance(error);
  return { code: error.code, retryable, tool };
}

/** The `isError` result of a call the server did not run: the error's text and the marker. */
export function notRunResult(error: unknown, body: NotRunBody): ToolResultLike {
  // The same text the SDK sent for this error before the marker existed.
  const text = error instanceof Error ? error.message : String(error);
  return { content: [{ type: 'text', text }], isError: true, _meta: { [NOT_RUN_META]: { ...body } } };
}
