// The options of fenceMcpServer and the shapes they name: a leaf the server's parts share.
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { CallStopError, Guard, PolicyMap } from '@toolfence/core';
import type { IncompleteResultTest } from './rounds.js';
import type { StoppedCallBody } from './stopped-result.js';
import type { ErrorResultsOption } from './tool-error.js';

/** What the SDK passes a tool handler besides its arguments. */
export type ToolHandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * A fixed value, or a function of the request's `extra` (session id, auth info, `_meta`) and the
 * tool's name; `undefined` falls back to the next source.
 */
export type RequestValue = string | ((extra: ToolHandlerExtra, toolName: string) => string | undefined);

/** The call an {@link FenceMcpServerOptions.onStop} hook is told about. */
export interface StoppedServerCall {
  readonly toolName: string;
  /** The JSON-RPC request id, as a string. */
  readonly requestId: string;
  readonly sessionId: string | undefined;
  readonly body: StoppedCallBody;
}

/** Options of {@link fenceMcpServer}. */
export interface FenceMcpServerOptions {
  /** The guard that runs every guarded call (and owns the store every server process shares). */
  readonly guard: Guard;
  /**
   * Policy per tool name; wins over the tool's annotations. A name with no tool yet applies when
   * a tool of that name is registered (so it is not refused). `Idempotency.READ_ONLY` leaves a
   * tool exactly as it was.
   */
  readonly policies?: PolicyMap | undefined;
  /**
   * Derive the policy of a tool without an entry in `policies` from its own annotations
   * (see {@link policyFromAnnotations}): `readOnlyHint` -> READ_ONLY, `idempotentHint` ->
   * IDEMPOTENT, otherwise EFFECTFUL. Default `true`: these are the annotations of the server
   * being fenced, written by its own authors. `false`: a tool without a policy runs unguarded.
   */
  readonly policiesFromAnnotations?: boolean | undefined;
  /**
   * Tenant of a call, e.g. `(extra) => extra.authInfo?.clientId`. Default: the guard's tenant.
   * Part of every key, so two tenants never share a record.
   */
  readonly tenant?: RequestValue | undefined;
  /**
   * Run id of a call without an idempotency key, for `'run'`-scoped policies (the default
   * scope). Default: `extra.sessionId` (Streamable HTTP sessions; stdio has none). Without a run
   * id such a call fails closed (`KeyDerivationError`, reported as an error result, tool not run).
   */
  readonly runId?: RequestValue | undefined;
  /**
   * The `params._meta` field the client's idempotency key is read from. Default
   * `'idempotencyKey'`. The top-level `params.idempotencyKey` is read too, whatever this says.
   */
  readonly idempotencyKeyMeta?: string | undefined;
  /**
   * What a tool's `isError` result is: `'failure'` (default; IDEMPOTENT: released, not
   * recorded, a retry runs it; EFFECTFUL: indeterminate unless the result carries
   * `_meta["io.toolfence/noEffect"]: true` or the policy's `isNoEffectError` accepts the
   * {@link McpToolError}) or `'outcome'` (recorded and replayed). One value, or one per tool name.
   * See {@link ErrorResultHandling}.
   */
  readonly errorResults?: ErrorResultsOption;
  /**
   * What a call gets whose key another call is still running: `'wait'` (default) waits for that
   * call (up to the policy's `waitTimeoutMs`) and answers its result; `'answer'` answers at once
   * with the "not run" result `OUTCOME_PENDING`, `retryable: true` (the in-progress error
   * SEP-3182 described), for a client that would rather retry later than hold a request open.
   */
  readonly inFlight?: 'wait' | 'answer' | undefined;
  /**
   * The longest (ms) a duplicate of a running call waits for it, for a policy that sets no
   * `waitTimeoutMs` of its own: a longer resolved wait (the guard's, or `2 × leaseMs` = 60 000 by
   * default) is cut to this. Default {@link DEFAULT_MCP_WAIT_TIMEOUT_MS} (50 000), 10 s under the
   * SDK client's default request timeout (`DEFAULT_REQUEST_TIMEOUT_MSEC`, 60 000), so a waiter is
   * answered (the result, or the retryable "not run" `OUTCOME_PENDING`) before its client gives
   * up. The guard also uses a policy's `waitTimeoutMs` as the grace a body gets after it lost its
   * lease or was interrupted, so this cuts that grace too.
   */
  readonly waitTimeoutMs?: number | undefined;
  /**
   * While a call has not entered its body (it waits for the call that holds its key, or for the
   * store), it sends a `notifications/progress` on its own request's progress token every this
   * many ms (`progress` 1, 2, 3…, no `total`, a message saying it waits), so a client that
   * called with `onprogress` and `resetTimeoutOnProgress` does not time out. A request without a
   * progress token gets none. Once the body runs, the tool's own progress is the only one.
   * Default {@link DEFAULT_WAIT_PROGRESS_MS} (1 000); `false`: none.
   */
  readonly waitProgressMs?: number | false | undefined;
  /**
   * Tells a multi round-trip request's incomplete (`input_required`) result from a final one;
   * such a round is never recorded (the claim is released, the client gets the result, and the
   * retried round with the same key runs the handler again). Default {@link isIncompleteResult}.
   */
  readonly isIncompleteResult?: IncompleteResultTest | undefined;
  /**
   * Called (synchronously, before the result is sent) when a call ends indeterminate or
   * abandoned: to alert an operator. An exception thrown by the hook is ignored.
   */
  readonly onStop?: ((error: CallStopError, call: StoppedServerCall) => void) | undefined;
}

/** Default of {@link FenceMcpServerOptions.waitTimeoutMs} (ms): 10 s under the SDK client's 60 s request timeout. */
export const DEFAULT_MCP_WAIT_TIMEOUT_MS = 50_000;

/** Default of {@link FenceMcpServerOptions.waitProgressMs} (ms). */
export const DEFAULT_WAIT_PROGRESS_MS = 1_000;
