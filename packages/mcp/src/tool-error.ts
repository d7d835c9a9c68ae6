import type { ToolResultLike } from './stopped-result.js';

/**
 * The `_meta` flag a tool sets on its own `isError` result to vouch that the call had no effect
 * (a refused validation, a declined card): an EFFECTFUL tool's claim is then released instead of
 * made indeterminate, and the same call may run again. `_meta: { "io.toolfence/noEffect": true }`.
 */
export const NO_EFFECT_META = 'io.toolfence/noEffect';

/**
 * The `_meta` flag a guarded server sets on an `isError` result it did not record (an IDEMPOTENT
 * tool's failure, or a failure the tool marked {@link NO_EFFECT_META}): the same call with the same
 * key runs the tool again, so a client may release its own claim too.
 */
export const NOT_RECORDED_META = 'io.toolfence/notRecorded';

/**
 * What an `isError` result of a tool is to the guard: `'failure'` (default) the tool failed, as if
 * its body had thrown (IDEMPOTENT: the claim is released, nothing recorded, a retry runs it;
 * EFFECTFUL: indeterminate, unless the result carries {@link NO_EFFECT_META} or the policy's
 * `isNoEffectError` accepts the {@link McpToolError}); `'outcome'` recorded and replayed like any
 * other result, for a tool whose error results are final answers (the 0.1 behaviour).
 */
export type ErrorResultHandling = 'failure' | 'outcome';

/** One handling for every tool, or one per tool name (a tool not named: `'failure'`). */
export type ErrorResultsOption =
  | ErrorResultHandling
  | { readonly [toolName: string]: ErrorResultHandling }
  | undefined;

const toolErrorMarker = Symbol.for('toolfence.mcp.toolError');

/**
 * A tool answered an `isError` result, seen as a failure (see {@link ErrorResultHandling}). On a
 * server it is what the guard sees in place of the result (the client still gets the result
 * itself); on a client, `fenceMcpClient`'s `callTool` rejects with it inside a guarded call, so
 * the client's guard does not record the failure as the call's outcome. An EFFECTFUL policy's
 * `isNoEffectError` may look at `result` to vouch that nothing happened.
 *
 * The message carries the tool's own text (what the model would have read), cut to 500
 * characters.
 */
export class McpToolError extends Error {
  readonly [toolErrorMarker] = true;
  /** The tool that answered the error. */
  readonly tool: string;
  /** The `isError` result the tool answered. */
  readonly result: ToolResultLike;
  /** The result carries {@link NO_EFFECT_META}: the tool vouches that nothing happened. */
  readonly noEffect: boolean;
  /** The result carries {@link NOT_RECORDED_META}: the server recorded nothing for the call. */
  readonly notRecorded: boolean;

  constructor(tool: string, result: ToolResultLike) {
    super(`Tool "${tool}" answered an error: ${textOf(result)}`);
    this.name = 'McpToolError';
    this.tool = tool;
    this.result = result;
    this.noEffect = result._meta?.[NO_EFFECT_META] === true;
    this.notRecorded = result._meta?.[NOT_RECORDED_META] === true;
  }

  /** True for this error from any copy of the package. */
  static isInstance(error: unknown): error is McpToolError {
    return (
      typeof error === 'object' &&
      error !== null &&
      (error as Record<symbol, unknown>)[toolErrorMarker] === true
    );
  }
}

/** True for a `CallToolResult`-shaped value with `isError: true`. */
export function isErrorResult(result: unknown): result is ToolResultLike {
  return result !== null && typeof result === 'object' && (result as ToolResultLike).isError === true;
}

/** The handling of `tool`'s error results under `option`. */
export function errorResultHandling(option: ErrorResultsOption, tool: string): ErrorResultHandling {
  if (option === undefined) return 'failure';
  if (typeof option === 'string') return option;
  return Object.hasOwn(option, tool) ? (option[tool] as ErrorResultHandling) : 'failure';
}

/** @throws TypeError for anything but `'failure'`, `'outcome'` or a table of them. */
export function checkErrorResults(option: unknown, where: string): void {
  if (option === undefined || option === 'failure' || option === 'outcome') return;
  const valid =
    option !== null &&
    typeof option === 'object' &&
    Object.values(option).every((value) => value === 'failure' || value === 'outcome');
  if (!valid) {
    throw new TypeError(
      `${where}: errorResults must be 'failure', 'outcome' or a table of them by tool name`,
    );
  }
}

function textOf(result: ToolResultLike): string {
  const content = Array.isArray(result.content) ? (result.content as unknown[]) : [];
  const texts = content
    .map((part) =>
      part !== null && typeof part === 'object' && (part as { type?: unknown }).type === 'text'
        ? String((part as { text?: unknown }).text)
        : '',
    )
    .filter((text) => text !== '');
  const text = texts.length === 0 ? '(no text)' : texts.join(' ');
  return text.length <= 500 ? text : `${text.slice(0, 500)}…`;
}
