import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  type CallStopError,
  type GuardedCall,
  Idempotency,
  type IdempotencyPolicy,
  isCallStopError,
} from '@toolfence/core';
import type { CLIENT_ACTION_ERROR_CODES } from './client-action.js';
import {
  businessKeyPolicy,
  clientKeyOf,
  IDEMPOTENCY_KEY_PARAM,
  type ProtocolInternals,
  readTopLevelKeys,
} from './client-key.js';
import { type NotRunBody, notRunBodyOf, notRunResult } from './not-run.js';
import { markedReplayed, type REPLAYED_META } from './replayed.js';
import { IncompleteRound, isIncompleteResult } from './rounds.js';
import { type PolicyOf, policyLookup } from './served-policy.js';
import {
  DEFAULT_MCP_WAIT_TIMEOUT_MS,
  DEFAULT_WAIT_PROGRESS_MS,
  type FenceMcpServerOptions,
  type RequestValue,
  type StoppedServerCall,
  type ToolHandlerExtra,
} from './server-options.js';
import {
  DEFAULT_IDEMPOTENCY_KEY_META,
  stoppedCallBody,
  stoppedCallResult,
  TOOLFENCE_CAPABILITY,
  type ToolfenceCapability,
  type ToolResultLike,
} from './stopped-result.js';
import {
  checkErrorResults,
  errorResultHandling,
  isErrorResult,
  McpToolError,
  NOT_RECORDED_META,
} from './tool-error.js';

export { IDEMPOTENCY_KEY_PARAM, MAX_CLIENT_KEY_LENGTH } from './client-key.js';
export {
  DEFAULT_MCP_WAIT_TIMEOUT_MS,
  DEFAULT_WAIT_PROGRESS_MS,
  type FenceMcpServerOptions,
  type RequestValue,
  type StoppedServerCall,
  type ToolHandlerExtra,
} from './server-options.js';

/** The text of a waiting call's keep-alive progress. */
const WAIT_PROGRESS_MESSAGE = 'toolfence: waiting for the call that holds this idempotency key';

// The parts of McpServer 1.32 this adapter relies on. `executeToolHandler` is the one method
// every plain tool call passes through (after lookup, enabled and input checks, before output
// validation); `_registeredTools` names the tool it was given.
interface McpServerInternals {
  _registeredTools: Record<string, RegisteredTool>;
  executeToolHandler(tool: RegisteredTool, args: unknown, extra: ToolHandlerExtra): Promise<unknown>;
  server: McpServer['server'];
}

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
