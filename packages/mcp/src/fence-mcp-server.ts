import { AsyncLocalStorage } from 'node:async_hooks';
import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import {
  type CallStopError,
  type Guard,
  type GuardedCall,
  Idempotency,
  type IdempotencyPolicy,
  isCallStopError,
  PolicyError,
  type PolicyMap,
} from '@toolfence/core';
import { policyFromAnnotations } from './annotation-policy.js';
import { type CLIENT_ACTION_ERROR_CODES, isClientActionError } from './client-action.js';
import { InvalidClientKeyError, type NotRunBody, notRunBodyOf, notRunResult } from './not-run.js';
import { markedReplayed, type REPLAYED_META } from './replayed.js';
import { type IncompleteResultTest, IncompleteRound, isIncompleteResult } from './rounds.js';
import {
  DEFAULT_IDEMPOTENCY_KEY_META,
  type StoppedCallBody,
  stoppedCallBody,
  stoppedCallResult,
  TOOLFENCE_CAPABILITY,
  type ToolfenceCapability,
  type ToolResultLike,
} from './stopped-result.js';
import {
  checkErrorResults,
  type ErrorResultsOption,
  errorResultHandling,
  isErrorResult,
  McpToolError,
  NOT_RECORDED_META,
} from './tool-error.js';

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

/** The text of a waiting call's keep-alive progress. */
const WAIT_PROGRESS_MESSAGE = 'toolfence: waiting for the call that holds this idempotency key';

/** The longest client idempotency key accepted (UTF-16 code units); the IETF draft's keys are far shorter. */
export const MAX_CLIENT_KEY_LENGTH = 255;

// The parts of McpServer 1.32 this adapter relies on. `executeToolHandler` is the one method
// every plain tool call passes through (after lookup, enabled and input checks, before output
// validation); `_registeredTools` names the tool it was given.
interface McpServerInternals {
  _registeredTools: Record<string, RegisteredTool>;
  executeToolHandler(tool: RegisteredTool, args: unknown, extra: ToolHandlerExtra): Promise<unknown>;
  server: McpServer['server'];
}

// The one Protocol method every incoming request passes through with its raw JSON-RPC message:
// the SDK's tools/call schema strips `params` members it does not know (a top-level
// `idempotencyKey` among them) before any handler sees them.
interface ProtocolInternals {
  _onrequest(request: { method?: unknown; params?: unknown }, extra?: unknown): unknown;
}

/** The top-level `params.idempotencyKey` of the tools/call request being handled, if it has one. */
interface TopLevelKey {
  readonly value: unknown;
}
const topLevelKeys = new AsyncLocalStorage<TopLevelKey | undefined>();

/** The name of the top-level `params` member read as a client key (SEP-3182's proposal). */
export const IDEMPOTENCY_KEY_PARAM = 'idempotencyKey';

const fencedServers = new WeakSet<object>();

/**
 * Make the tool handlers of an MCP `McpServer` run at most once per key, without rewriting the
 * server: tools already registered and tools registered later, including handlers replaced with
 * `tool.update({ callback })` and renamed tools.
 *
 * - Key: the client's `params._meta.idempotencyKey` (see `idempotencyKeyMeta`) or top-level
 *   `params.idempotencyKey` (what SEP-3182, closed unmerged, proposed; both set and different:
 *   refused, not run), hashed with tenant and tool as a business key (`scope: 'tenant'`), so a
 *   key reused with other arguments is an `IdempotencyConflictError`. Without one, the key the
 *   policy derives from the arguments (run scope: the run id is `options.runId`). The JSON-RPC
 *   request id is the call id, never a key: a re-issued request has a new one.
 * - A refusal before the tool ran answers an `isError` result marked
 *   `_meta["io.toolfence/notRun"]` ({@link NotRunBody}); a tool's own `isError` result is a
 *   failure (see `errorResults`).
 * - Policy: `options.policies[name]`, else the tool's annotations (`policiesFromAnnotations`).
 * - A repeat returns the recorded `CallToolResult` (structured content included) with
 *   `_meta["io.toolfence/replayed"]: true` ({@link REPLAYED_META}); nothing runs for it, so no
 *   notification, sampling or elicitation request is sent. A call in flight with the same key
 *   waits for it (keep-alive progress, see `waitProgressMs`; at most `waitTimeoutMs`) and gets its
 *   result, marked the same way.
 * - An indeterminate or abandoned call answers an `isError` result whose text says so and whose
 *   `_meta.toolfence` (and `structuredContent.toolfence` when the tool has no output schema)
 *   names the key: see `docs/mcp.md`. Every other guard error (conflict, store unavailable, key
 *   derivation, a waiter's `OutcomePendingError`) is thrown to the SDK, which answers it as an
 *   `isError` text result, as it does any handler error.
 * - A JSON-RPC error that asks the client to act first (-32042 `UrlElicitationRequired`, see
 *   {@link CLIENT_ACTION_ERROR_CODES}) passes through to the client as the SDK sends it, and
 *   nothing is recorded, whatever the policy.
 * - Advertises `capabilities.experimental.toolfence = { version: 1, idempotencyKeyMeta }`.
 *
 * Call it before `connect()` (capabilities are fixed once connected). Task-based tools
 * (`experimental.tasks.registerToolTask`) called with a task are guarded at `createTask`: a
 * re-issue with the same key gets the recorded `CreateTaskResult`, the same task.
 *
 * @returns the same server.
 * @throws TypeError the server is not an SDK 1.32-compatible McpServer, is already fenced, or is
 *   connected.
 * @throws PolicyError a policy is invalid, names a `keyArguments` entry that is not a parameter
 *   of the tool's input schema, or has `key: 'call'` (the request id is no key on a server).
 */
export function fenceMcpServer<S extends McpServer>(server: S, options: FenceMcpServerOptions): S {
  const { guard } = options ?? ({} as FenceMcpServerOptions);
  if (guard === undefined || typeof guard.run !== 'function') {
    throw new TypeError('fenceMcpServer needs a guard');
  }
  const internals = internalsOf(server);
  if (fencedServers.has(server)) throw new TypeError('fenceMcpServer: this server is already fenced');
  const policies = options.policies ?? {};
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('fenceMcpServer: policies must be an object (tool name -> policy)');
  }
  const metaName = options.idempotencyKeyMeta ?? DEFAULT_IDEMPOTENCY_KEY_META;
  if (typeof metaName !== 'string' || metaName.length === 0) {
    throw new TypeError('fenceMcpServer: idempotencyKeyMeta must be a non-empty string');
  }
  checkErrorResults(options.errorResults, 'fenceMcpServer');
  if (options.isIncompleteResult !== undefined && typeof options.isIncompleteResult !== 'function') {
    throw new TypeError('fenceMcpServer: isIncompleteResult must be a function');
  }
  if (options.inFlight !== undefined && options.inFlight !== 'wait' && options.inFlight !== 'answer') {
    throw new TypeError("fenceMcpServer: inFlight must be 'wait' or 'answer'");
  }
  const waitLimitMs = checkedMs(options.waitTimeoutMs, 'waitTimeoutMs') ?? DEFAULT_MCP_WAIT_TIMEOUT_MS;
  if (options.waitProgressMs !== false) checkedMs(options.waitProgressMs, 'waitProgressMs');
  const policyOf = policyLookup(guard, policies, options.policiesFromAnnotations ?? true, {
    answerInFlight: options.inFlight === 'answer',
    waitLimitMs,
  });

  // Fail at wrap time, not at the first call, for every tool already registered.
  for (const [toolName, tool] of Object.entries(internals._registeredTools)) policyOf(toolName, tool);

  const capability: ToolfenceCapability = {
    version: 1,
    idempotencyKeyMeta: metaName,
    idempotencyKeyParam: IDEMPOTENCY_KEY_PARAM,
  };
  internals.server.registerCapabilities({ experimental: { [TOOLFENCE_CAPABILITY]: { ...capability } } });

  readTopLevelKeys(internals.server as unknown as ProtocolInternals);
  internals.executeToolHandler = fencedHandler(internals.executeToolHandler, options, metaName, policyOf);
  fencedServers.add(server);
  return server;
}

/**
 * Runs each incoming tools/call request with its raw top-level `params.idempotencyKey` in
 * `topLevelKeys`, where the fenced handler reads it (the SDK's parsed request no longer has it;
 * the handler runs in the request's async context).
 */
function readTopLevelKeys(protocol: ProtocolInternals): void {
  const onRequest = protocol._onrequest;
  if (typeof onRequest !== 'function') {
    throw new TypeError(
      'fenceMcpServer needs an McpServer of @modelcontextprotocol/sdk ^1.32.2 (with _onrequest)',
    );
  }
  protocol._onrequest = function onToolfenceRequest(this: ProtocolInternals, request, extra) {
    const params = request?.params as Record<string, unknown> | undefined;
    const key =
      request?.method === 'tools/call' &&
      params !== null &&
      typeof params === 'object' &&
      Object.hasOwn(params, IDEMPOTENCY_KEY_PARAM)
        ? { value: params[IDEMPOTENCY_KEY_PARAM] }
        : undefined;
    return topLevelKeys.run(key, () => onRequest.call(this, request, extra));
  };
}

/** The server's internals the adapter wraps; a different SDK shape is refused (it would leave tools unguarded). */
function internalsOf(server: McpServer): McpServerInternals {
  const internals = server as unknown as McpServerInternals;
  if (
    internals === null ||
    typeof internals !== 'object' ||
    typeof internals.executeToolHandler !== 'function' ||
    typeof (internals.server as unknown as Partial<ProtocolInternals> | undefined)?._onrequest !==
      'function' ||
    internals._registeredTools === null ||
    typeof internals._registeredTools !== 'object'
  ) {
    // A different SDK shape would leave every tool silently unguarded: refuse instead.
    throw new TypeError(
      'fenceMcpServer needs an McpServer of @modelcontextprotocol/sdk ^1.32.2 (with executeToolHandler, _registeredTools and server._onrequest)',
    );
  }
  return internals;
}

type PolicyOf = (toolName: string, tool: RegisteredTool) => IdempotencyPolicy | undefined;

/** A tool's policy (given, else from its annotations), checked once per tool and policy. */
function policyLookup(
  guard: Guard,
  policies: PolicyMap,
  fromAnnotations: boolean,
  waits: WaitSettings,
): PolicyOf {
  const checked = new WeakMap<RegisteredTool, IdempotencyPolicy>();
  const adapted = new WeakMap<IdempotencyPolicy, IdempotencyPolicy>();
  return (toolName, tool) => {
    const policy = Object.hasOwn(policies, toolName)
      ? policies[toolName]
      : fromAnnotations
        ? policyFromAnnotations(tool.annotations)
        : undefined;
    if (policy === undefined) return undefined;
    // Checked once per tool and policy, against the tool's parameters.
    if (checked.get(tool) !== policy) {
      if (policy.key === 'call') {
        // The call id here is the JSON-RPC request id: a per-connection counter that a retry does
        // not repeat and another connection does reuse, so it would both miss repeats and merge
        // different calls.
        throw new PolicyError(
          'key',
          "'call' is not a key on an MCP server (the JSON-RPC request id is a per-connection counter): " +
            "use the client's _meta idempotency key, 'arguments' or a business key",
          { tool: toolName },
        );
      }
      guard.checkPolicy(policy, { tool: toolName, parameterNames: parameterNamesOf(tool.inputSchema) });
      checked.set(tool, policy);
    }
    if (policy.kind === Idempotency.READ_ONLY) return policy;
    // One copy per policy: the guard resolves each policy object once.
    let served = adapted.get(policy);
    if (served === undefined) {
      const resolvedWaitMs = guard.checkPolicy(policy, { tool: toolName }).waitTimeoutMs;
      served = servedPolicy(policy, resolvedWaitMs, waits);
      adapted.set(policy, served);
    }
    return served;
  };
}

interface WaitSettings {
  readonly answerInFlight: boolean;
  readonly waitLimitMs: number;
}

/**
 * The policy as the server runs it: an EFFECTFUL one also releases on an error result the tool
 * marked as without effect, on an input_required round and on an error asking the client to act;
 * a duplicate of a running call waits at most `waitLimitMs` unless the policy sets its own
 * `waitTimeoutMs` (the resolved default, 60 s, equals the SDK client's request timeout: the
 * waiter's client would give up just as its answer came); with `inFlight: 'answer'` it waits
 * 1 ms, so it is answered "in progress" (`OutcomePendingError`, a retryable "not run") at once.
 */
function servedPolicy(
  policy: IdempotencyPolicy,
  resolvedWaitMs: number,
  waits: WaitSettings,
): IdempotencyPolicy {
  const effectful = policy.kind === Idempotency.EFFECTFUL ? acceptingNoEffectResults(policy) : policy;
  if (waits.answerInFlight) return { ...effectful, waitTimeoutMs: 1 };
  if (policy.waitTimeoutMs === undefined && resolvedWaitMs > waits.waitLimitMs) {
    return { ...effectful, waitTimeoutMs: waits.waitLimitMs };
  }
  return effectful;
}

/** An EFFECTFUL policy that also releases on an error result the tool marked as having had no effect. */
function acceptingNoEffectResults(policy: IdempotencyPolicy): IdempotencyPolicy {
  const own = policy.isNoEffectError;
  return {
    ...policy,
    isNoEffectError: (error) =>
      (McpToolError.isInstance(error) && error.noEffect) ||
      // A round that asked for input did not do the effect: that happens on the final round.
      IncompleteRound.isInstance(error) ||
      // "The user must open this URL first": nothing ran; the client gets the JSON-RPC error.
      isClientActionError(error) ||
      (own !== undefined && own(error) === true),
  };
}

/** The SDK's `executeToolHandler`, each call of a tool with an effectful policy run through the guard. */
function fencedHandler(
  execute: McpServerInternals['executeToolHandler'],
  options: FenceMcpServerOptions,
  metaName: string,
  policyOf: PolicyOf,
): McpServerInternals['executeToolHandler'] {
  const { guard } = options;
  const isIncomplete = options.isIncompleteResult ?? isIncompleteResult;
  return async function fencedExecuteToolHandler(
    this: McpServerInternals,
    tool: RegisteredTool,
    args: unknown,
    extra: ToolHandlerExtra,
  ): Promise<unknown> {
    const run = (signal: AbortSignal | undefined) =>
      execute.call(this, tool, args, signal === undefined ? extra : { ...extra, signal });
    const toolName = nameOf(this._registeredTools, tool);
    if (toolName === undefined) return run(undefined);
    // A task tool reaches this hook only for a task-augmented request; its `createTask` is
    // guarded like any handler: the CreateTaskResult is the outcome, so a re-issue with the same
    // key gets the same task instead of starting a second one. (SDK 1.32 runs an 'optional' task
    // tool called without a task through handleAutomaticTaskPolling, which calls createTask
    // directly: that path is not guarded.)
    let base: IdempotencyPolicy | undefined;
    try {
      base = policyOf(toolName, tool);
    } catch (error) {
      // A tool registered after fencing with a bad policy: refused, not run.
      return refusedBeforeRunning(error, toolName);
    }
    if (base === undefined || base.kind === Idempotency.READ_ONLY) return run(undefined);

    // Whether the guard entered the body: an error after that is the tool's (or its outcome's),
    // never a "not run".
    let entered = false;
    const failOnErrorResult = errorResultHandling(options.errorResults, toolName) === 'failure';
    const body = async (context: { signal: AbortSignal }) => {
      entered = true;
      const result = await run(context.signal);
      // MCP's channel for a tool's failure is an isError result, not a throw: the guard must see
      // it as the failure it is, or it records a transient error as the answer for a day.
      if (failOnErrorResult && isErrorResult(result)) throw new McpToolError(toolName, result);
      // An input_required round is not an outcome: released, never recorded or replayed.
      if (isIncomplete(result)) throw new IncompleteRound(toolName, result);
      return result;
    };
    let clientKey: string | undefined;
    let tenant: string | undefined;
    try {
      clientKey = clientKeyOf(extra, metaName);
      tenant = resolveValue(options.tenant, extra, toolName);
    } catch (error) {
      return refusedBeforeRunning(error, toolName);
    }
    const call: GuardedCall = {
      tool: toolName,
      // The validated arguments the handler receives; a tool without an input schema gets none.
      arguments: (args ?? {}) as Record<string, unknown>,
      callId: String(extra.requestId),
      tenant,
      runId:
        clientKey === undefined
          ? (resolveValue(options.runId, extra, toolName) ?? extra.sessionId)
          : undefined,
      policy: clientKey === undefined ? base : businessKeyPolicy(base, clientKey),
      signal: extra.signal,
    };
    const stopKeepAlive = keepAliveWhileWaiting(extra, options.waitProgressMs, () => entered);
    try {
      const result = await guard.run(call, body);
      // Not entered: the answer is another request's (a recorded repeat, or the holder this call
      // waited for). Say so, so a client can tell that nothing ran for this request.
      return entered ? result : markedReplayed(result);
    } catch (error) {
      if (!isCallStopError(error)) {
        // The guard released the claim of a failed call (IDEMPOTENT, or a no-effect failure):
        // the client gets the tool's own result, marked as not recorded.
        if (McpToolError.isInstance(error)) return notRecorded(error.result);
        if (IncompleteRound.isInstance(error)) return error.result;
        if (entered) throw error;
        return refusedBeforeRunning(error, toolName);
      }
      const stopped = stoppedCallBody(error, tenant ?? guard.tenant, clientKey);
      notifyStopped(options, error, {
        toolName,
        requestId: String(extra.requestId),
        sessionId: extra.sessionId,
        body: stopped,
      });
      return stoppedCallResult(error, stopped, tool.outputSchema !== undefined);
    } finally {
      stopKeepAlive();
    }
  };
}

/**
 * Sends a `notifications/progress` on the request's own progress token every `everyMs` while the
 * call has not entered its body (it waits for the key's holder, which may be in another process,
 * so the holder's own progress cannot be forwarded). Returns the function that stops it. A
 * request without a progress token, or `everyMs === false`, gets none.
 */
function keepAliveWhileWaiting(
  extra: ToolHandlerExtra,
  everyMs: number | false | undefined,
  entered: () => boolean,
): () => void {
  const token = (extra._meta as { progressToken?: unknown } | undefined)?.progressToken;
  if (everyMs === false || (typeof token !== 'string' && typeof token !== 'number')) return () => {};
  let progress = 0;
  const timer = setInterval(() => {
    // Once the body runs, the tool reports its own progress on the token (which must increase).
    if (entered() || extra.signal.aborted) {
      clearInterval(timer);
      return;
    }
    progress += 1;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress, message: WAIT_PROGRESS_MESSAGE },
      })
      .catch(() => {
        // A closed transport: the answer will not reach the client either; nothing to do here.
      });
  }, everyMs ?? DEFAULT_WAIT_PROGRESS_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/** A duration option: `undefined`, or a positive finite number of ms. */
function checkedMs(value: unknown, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new TypeError(`fenceMcpServer: ${name} must be a positive number of milliseconds`);
  }
  return value;
}

/**
 * The answer to a call refused before its body ran: an `isError` result with the
 * `io.toolfence/notRun` marker, so a client can tell "nothing happened" from a tool's failure.
 * An error that is not one of the guard's refusals is thrown to the SDK as before.
 */
function refusedBeforeRunning(error: unknown, toolName: string): unknown {
  const body = notRunBodyOf(error, toolName);
  if (body === undefined) throw error;
  return notRunResult(error, body);
}

/** The tool's result with `_meta["io.toolfence/notRecorded"]: true`. */
function notRecorded(result: ToolResultLike): ToolResultLike {
  return { ...result, _meta: { ...(result._meta ?? {}), [NOT_RECORDED_META]: true } };
}

/** Tells `options.onStop` of a stopped call; what the hook throws is ignored. */
function notifyStopped(options: FenceMcpServerOptions, error: CallStopError, call: StoppedServerCall): void {
  if (options.onStop === undefined) return;
  try {
    options.onStop(error, call);
  } catch {
    // A hook must not change what the client gets.
  }
}

/** The policy with the client's key as its business key, held across runs of the tenant. */
function businessKeyPolicy(policy: IdempotencyPolicy, clientKey: string): IdempotencyPolicy {
  const { keyArguments: _ignored, ...rest } = policy;
  return { ...rest, key: () => clientKey, scope: 'tenant' };
}

/**
 * The client's key: `params._meta[metaName]` and/or the top-level `params.idempotencyKey`. Both
 * set and equal: that key; both set and different: refused (which one the client meant is
 * unknown, and either choice could merge two calls or split one).
 * @throws InvalidClientKeyError a key that is not a non-empty string of at most 255 characters,
 *   or two keys that differ (before anything is claimed).
 */
function clientKeyOf(extra: ToolHandlerExtra, metaName: string): string | undefined {
  const meta = extra._meta as Record<string, unknown> | undefined;
  const inMeta =
    meta === undefined || meta === null || !Object.hasOwn(meta, metaName)
      ? undefined
      : checkedKey(meta[metaName], `_meta.${metaName}`);
  const topLevel = topLevelKeys.getStore();
  const inParams = topLevel === undefined ? undefined : checkedKey(topLevel.value, IDEMPOTENCY_KEY_PARAM);
  if (inMeta !== undefined && inParams !== undefined && inMeta !== inParams) {
    throw new InvalidClientKeyError(
      `params.${IDEMPOTENCY_KEY_PARAM} and params._meta.${metaName} are both set and differ: send one key`,
    );
  }
  return inMeta ?? inParams;
}

function checkedKey(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_CLIENT_KEY_LENGTH) {
    // Thrown before anything is claimed: answered as a "not run" result.
    throw new InvalidClientKeyError(
      `${where} must be a non-empty string of at most ${MAX_CLIENT_KEY_LENGTH} characters`,
    );
  }
  return value;
}

function nameOf(tools: Record<string, RegisteredTool>, tool: RegisteredTool): string | undefined {
  for (const name in tools) if (tools[name] === tool) return name;
  return undefined;
}

function resolveValue(
  value: RequestValue | undefined,
  extra: ToolHandlerExtra,
  toolName: string,
): string | undefined {
  return typeof value === 'function' ? value(extra, toolName) : value;
}

/** The top-level parameter names of a registered tool's (zod object) input schema. */
function parameterNamesOf(schema: unknown): readonly string[] | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const internals = schema as {
    _zod?: { def?: { type?: unknown; shape?: unknown } };
    _def?: { typeName?: unknown; shape?: unknown };
  };
  const zod4 = internals._zod?.def;
  if (zod4 !== undefined) {
    return zod4.type === 'object' && isRecord(zod4.shape) ? Object.keys(zod4.shape) : undefined;
  }
  const zod3 = internals._def;
  if (zod3?.typeName === 'ZodObject') {
    const shape = typeof zod3.shape === 'function' ? (zod3.shape as () => unknown)() : zod3.shape;
    return isRecord(shape) ? Object.keys(shape) : undefined;
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object';
}
