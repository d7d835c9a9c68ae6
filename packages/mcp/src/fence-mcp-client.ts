import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  currentToolCall,
  Idempotency,
  type IdempotencyPolicy,
  PolicyError,
  type PolicyMap,
  type StopMode,
} from '@toolfence/core';
import { policyFromAnnotations, type ToolHints } from './annotation-policy.js';
import { nextCallKey } from './call-key.js';
import { isClientActionError } from './client-action.js';
import { isMcpServerNotRunError, McpServerNotRunError, notRunOf } from './not-run.js';
import { isRoundRetry } from './rounds.js';
import {
  callStopErrorOf,
  DEFAULT_IDEMPOTENCY_KEY_META,
  stoppedCallOf,
  TOOLFENCE_CAPABILITY,
  type ToolfenceCapability,
} from './stopped-result.js';
import {
  checkErrorResults,
  type ErrorResultsOption,
  errorResultHandling,
  isErrorResult,
  McpToolError,
} from './tool-error.js';

/** Options of {@link fenceMcpClient}. */
export interface FenceMcpClientOptions {
  /**
   * The `_meta` field the key is sent in. Default: the one the server advertises in
   * `capabilities.experimental.toolfence`, else `'idempotencyKey'`.
   */
  readonly idempotencyKeyMeta?: string | undefined;
  /**
   * What `callTool` does with a result in which a guarded server reports an indeterminate or
   * abandoned call: `'throw'` (default) rejects with the `IndeterminateOutcomeError` /
   * `ExecutionAbandonedError` (key, tool, attempt, fence from the server), so a guarded client
   * tool stops the run as the other adapters do; `'report'` returns the `isError` result
   * unchanged, for the model to read.
   */
  readonly onIndeterminate?: StopMode | undefined;
  /**
   * Inside a guarded call, what a tool's `isError` result is: `'failure'` (default) `callTool`
   * rejects with a {@link McpToolError} carrying the result, so the client's guard treats it as
   * a failed body (IDEMPOTENT: released and rethrown; EFFECTFUL: indeterminate unless its
   * `isNoEffectError` accepts it; the policies of {@link mcpToolPolicies} accept a result the
   * server marked as not recorded or as without effect); `'outcome'` returns it, to be recorded as
   * the call's outcome. One value, or one per tool name. Outside a guarded call the result is
   * always returned.
   */
  readonly errorResults?: ErrorResultsOption;
}

type CallTool = Client['callTool'];
const fencedClients = new WeakSet<object>();

/**
 * Make an MCP `Client` forward idempotency keys derived from the guard's: each `callTool` made
 * inside a guarded call (a tool body run by `guard.run`, `fenceTools` of `@toolfence/vercel-ai`
 * or `@toolfence/langchain`) sends its own key, {@link mcpCallKey} of the guarded call's key,
 * the tool, the arguments and its ordinal among identical calls, as
 * `params._meta.idempotencyKey` (the advertised field), so a guarded server dedupes every call
 * and replays each one to a retry of the guarded call (a key the caller already put in `_meta`
 * or in a top-level `params.idempotencyKey` is kept, and none is added). Outside a guarded
 * call, or in a READ_ONLY one, nothing is added. A server that
 * ignores the key is unaffected; {@link toolfenceCapabilityOf} tells which kind it is.
 *
 * The wrapped `callTool` rejects, instead of returning the result:
 * - with {@link McpServerNotRunError} when the server says it ran nothing (always);
 * - with `IndeterminateOutcomeError` / `ExecutionAbandonedError` when the server reports a
 *   stopped call (unless `onIndeterminate: 'report'`);
 * - with {@link McpToolError} for any other `isError` result inside a guarded call (unless
 *   `errorResults` says `'outcome'`).
 *
 * @returns the same client, whose `callTool` is wrapped.
 * @throws TypeError the client has no `callTool`, is already fenced, or `errorResults` is invalid.
 */
export function fenceMcpClient<C extends Client>(client: C, options: FenceMcpClientOptions = {}): C {
  if (client === null || typeof client !== 'object' || typeof client.callTool !== 'function') {
    throw new TypeError('fenceMcpClient needs an MCP Client (with callTool)');
  }
  if (fencedClients.has(client)) throw new TypeError('fenceMcpClient: this client is already fenced');
  const report = options.onIndeterminate === 'report';
  checkErrorResults(options.errorResults, 'fenceMcpClient');
  const callTool: CallTool = client.callTool.bind(client);
  const fenced: CallTool = async (params, resultSchema, requestOptions) => {
    const context = currentToolCall();
    const guarded = context !== undefined && context.idempotencyKey !== '';
    let sent = params;
    if (guarded) {
      const metaName =
        options.idempotencyKeyMeta ??
        toolfenceCapabilityOf(client)?.idempotencyKeyMeta ??
        DEFAULT_IDEMPOTENCY_KEY_META;
      const meta = params._meta ?? {};
      // A key the caller set (in `_meta`, or top-level as SEP-3182 proposed) is the caller's.
      if (!Object.hasOwn(meta, metaName) && !Object.hasOwn(params, 'idempotencyKey')) {
        // One key per callTool, not the guarded call's own: several calls in one body are several
        // effects (see mcpCallKey).
        const key = nextCallKey(context, params.name, params.arguments, isRoundRetry(params));
        sent = { ...params, _meta: { ...meta, [metaName]: key } };
      }
    }
    const result = await callTool(sent, resultSchema, requestOptions);
    // The server did not run the tool: not an outcome, so never returned as one (a guarded
    // client call would record it and replay the refusal to every retry).
    const notRun = notRunOf(result);
    if (notRun !== undefined) throw new McpServerNotRunError(notRun, client.getServerVersion()?.name);
    if (!report) {
      const stopped = stoppedCallOf(result);
      if (stopped !== undefined) throw callStopErrorOf(stopped, client.getServerVersion()?.name);
    }
    if (
      guarded &&
      isErrorResult(result) &&
      stoppedCallOf(result) === undefined &&
      errorResultHandling(options.errorResults, params.name) === 'failure'
    ) {
      // A failure, not an outcome: the guard of the call this runs in must not record it.
      throw new McpToolError(params.name, result);
    }
    return result;
  };
  client.callTool = fenced;
  fencedClients.add(client);
  return client;
}

/**
 * What a connected server advertises in `capabilities.experimental.toolfence`, or `undefined`
 * for a server that does not dedupe by a client's key (or before `connect()`).
 */
export function toolfenceCapabilityOf(
  client: Pick<Client, 'getServerCapabilities'>,
): ToolfenceCapability | undefined {
  const value = client.getServerCapabilities()?.experimental?.[TOOLFENCE_CAPABILITY] as
    | Partial<ToolfenceCapability>
    | undefined;
  if (value === null || typeof value !== 'object') return undefined;
  if (typeof value.idempotencyKeyMeta !== 'string' || value.idempotencyKeyMeta === '') return undefined;
  const param = value.idempotencyKeyParam;
  return {
    version: 1,
    idempotencyKeyMeta: value.idempotencyKeyMeta,
    ...(typeof param === 'string' && param !== '' ? { idempotencyKeyParam: param } : {}),
  };
}

/** A tool as `client.listTools()` lists it (the fields read here). */
export interface ListedTool {
  readonly name: string;
  readonly annotations?: ToolHints | undefined;
}

/** Options of {@link mcpToolPolicies}. */
export interface McpToolPoliciesOptions {
  /** Policies by tool name; always win. */
  readonly policies?: PolicyMap | undefined;
  /**
   * Derive a policy from the server's annotations for every listed tool without one in
   * `policies` ({@link policyFromAnnotations}). Only `true` does: the specification says a client
   * must not base decisions on annotations from a server it does not trust. Without it a tool
   * without a policy gets none and runs as it did.
   */
  readonly trustAnnotations?: boolean | undefined;
}

/**
 * The policy table (tool name -> policy) for the tools a client listed, to give `fenceTools`
 * (`@toolfence/vercel-ai`, `@toolfence/langchain`) for the tools made from them. Every
 * EFFECTFUL policy in it (explicit or from annotations) is a copy whose `isNoEffectError` also
 * accepts {@link McpServerNotRunError}, so a server's "not run" releases the client's claim, and
 * a JSON-RPC error that asks the client to act first ({@link isClientActionError}: -32042, a URL
 * to open).
 *
 * @throws PolicyError an entry of `policies` names a tool the server did not list.
 */
export function mcpToolPolicies(
  tools: ReadonlyArray<ListedTool> | { readonly tools: ReadonlyArray<ListedTool> },
  options: McpToolPoliciesOptions = {},
): Record<string, IdempotencyPolicy> {
  const listed = Array.isArray(tools)
    ? tools
    : (tools as { readonly tools: ReadonlyArray<ListedTool> }).tools;
  const explicit = options.policies ?? {};
  const names = new Set(listed.map((tool) => tool.name));
  for (const name of Object.keys(explicit)) {
    if (!names.has(name)) {
      throw new PolicyError('policies', `names tool "${name}", which the server did not list`, {
        tool: name,
      });
    }
  }
  const table: Record<string, IdempotencyPolicy> = {};
  for (const tool of listed) {
    const policy = Object.hasOwn(explicit, tool.name)
      ? explicit[tool.name]
      : options.trustAnnotations === true
        ? policyFromAnnotations(tool.annotations)
        : undefined;
    if (policy !== undefined) table[tool.name] = releasingNotRun(policy);
  }
  return table;
}

/**
 * An EFFECTFUL policy whose `isNoEffectError` also accepts {@link McpServerNotRunError}: the
 * server said it ran nothing, so the client's claim is released rather than made
 * indeterminate. Other kinds are returned as they are (IDEMPOTENT releases on any error).
 */
function releasingNotRun(policy: IdempotencyPolicy): IdempotencyPolicy {
  if (policy.kind !== Idempotency.EFFECTFUL) return policy;
  const own = policy.isNoEffectError;
  return {
    ...policy,
    isNoEffectError: (error) =>
      isMcpServerNotRunError(error) ||
      // The server asks the client to act first (-32042, a URL to open): nothing ran there.
      isClientActionError(error) ||
      // The server recorded nothing (its tool is idempotent or vouched for no effect): a retry
      // is the server's to dedupe.
      (McpToolError.isInstance(error) && (error.notRecorded || error.noEffect)) ||
      (own !== undefined && own(error) === true),
  };
}
