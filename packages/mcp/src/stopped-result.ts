import { type CallStopError, ExecutionAbandonedError, IndeterminateOutcomeError } from '@toolfence/core';

/**
 * The default `params._meta` field in which a client sends its idempotency key. (SEP-3182, closed
 * unmerged, proposed a top-level `params.idempotencyKey` instead; a guarded server reads both.)
 */
export const DEFAULT_IDEMPOTENCY_KEY_META = 'idempotencyKey';

/**
 * The name of the experimental server capability (`capabilities.experimental.toolfence`) and of
 * the `_meta` / `structuredContent` field that carries a stopped call's body.
 */
export const TOOLFENCE_CAPABILITY = 'toolfence';

/** What a guarded server advertises in `capabilities.experimental.toolfence`. */
export interface ToolfenceCapability {
  /** Version of this description; 1. */
  readonly version: 1;
  /** The `params._meta` field the server reads the client's idempotency key from. */
  readonly idempotencyKeyMeta: string;
  /**
   * The top-level `params` member the server also reads a key from (`'idempotencyKey'`, as
   * SEP-3182 proposed); absent from servers of toolfence before it read one.
   */
  readonly idempotencyKeyParam?: string;
}

/**
 * The machine-readable body of a call the server stopped, in the result's `_meta.toolfence` (and
 * in `structuredContent.toolfence` when the tool has no output schema).
 */
export interface StoppedCallBody {
  readonly code: 'INDETERMINATE_OUTCOME' | 'EXECUTION_ABANDONED';
  /** The server's idempotency key (its store's record key): `guard.resolve(key, { tenant })` settles it. */
  readonly key: string;
  readonly tenant: string;
  readonly tool: string;
  readonly attempt: number;
  readonly fence: number;
  /** INDETERMINATE_OUTCOME: what made the outcome unknown (the recorded error's type). */
  readonly reasonType?: string;
  /** The key the client sent in `_meta`, when it sent one. */
  readonly idempotencyKey?: string;
}

/** A `CallToolResult`-shaped object (the fields this package reads or writes). */
export interface ToolResultLike {
  readonly content?: unknown;
  readonly structuredContent?: unknown;
  readonly isError?: boolean;
  readonly _meta?: Record<string, unknown>;
  readonly [field: string]: unknown;
}

export function stoppedCallBody(
  error: CallStopError,
  tenant: string,
  idempotencyKey: string | undefined,
): StoppedCallBody {
  const common = { key: error.key, tenant, tool: error.tool, attempt: error.attempt, fence: error.fence };
  const withKey = idempotencyKey === undefined ? {} : { idempotencyKey };
  return IndeterminateOutcomeError.isInstance(error)
    ? { code: 'INDETERMINATE_OUTCOME', ...common, reasonType: error.reasonType, ...withKey }
    : { code: 'EXECUTION_ABANDONED', ...common, ...withKey };
}

/** The `isError` result a guarded server answers for a stopped call. */
export function stoppedCallResult(
  error: CallStopError,
  body: StoppedCallBody,
  hasOutputSchema: boolean,
): ToolResultLike {
  return {
    content: [{ type: 'text', text: error.message }],
    // A client validates structuredContent against the tool's output schema even on an error
    // result (SDK 1.32 Client.callTool), so it is only added where no schema can refuse it.
    ...(hasOutputSchema ? {} : { structuredContent: { [TOOLFENCE_CAPABILITY]: body } }),
    isError: true,
    _meta: { [TOOLFENCE_CAPABILITY]: body },
  };
}

/**
 * The body of a call a guarded server stopped (indeterminate or abandoned), read from a
 * `CallToolResult`'s `_meta.toolfence`; `undefined` for any other result.
 */
export function stoppedCallOf(result: unknown): StoppedCallBody | undefined {
  if (result === null || typeof result !== 'object') return undefined;
  const { isError, _meta } = result as ToolResultLike;
  if (isError !== true || _meta === null || typeof _meta !== 'object') return undefined;
  const body = _meta[TOOLFENCE_CAPABILITY] as Partial<StoppedCallBody> | null | undefined;
  if (body === null || typeof body !== 'object') return undefined;
  if (body.code !== 'INDETERMINATE_OUTCOME' && body.code !== 'EXECUTION_ABANDONED') return undefined;
  if (typeof body.key !== 'string' || typeof body.tool !== 'string') return undefined;
  return body as StoppedCallBody;
}

/** The typed error for a stopped call's body, as the guard itself would throw it. */
export function callStopErrorOf(body: StoppedCallBody, serverName: string | undefined): CallStopError {
  const details = {
    key: body.key,
    tool: body.tool,
    attempt: typeof body.attempt === 'number' ? body.attempt : 0,
    fence: typeof body.fence === 'number' ? body.fence : 0,
  };
  if (body.code === 'EXECUTION_ABANDONED') return new ExecutionAbandonedError(details);
  const server = serverName === undefined ? 'the MCP server' : `MCP server "${serverName}"`;
  return new IndeterminateOutcomeError({
    ...details,
    reasonType: typeof body.reasonType === 'string' ? body.reasonType : 'RemoteIndeterminate',
    reason: `reported by ${server} for tenant "${body.tenant}"`,
  });
}
