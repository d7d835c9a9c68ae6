import type { FunctionTool, RunContext, ToolExecuteArgument, ToolInputParameters } from '@openai/agents-core';
import { prepareFunctionToolInput } from '@openai/agents-core/utils/internal';
import {
  type Guard,
  type GuardedCall,
  type IdempotencyPolicy,
  isCallStopError,
  KeyDerivationError,
  PolicyError,
  type StopMode,
  stopReport,
} from '@toolfence/core';
import { registerApprovalDecider } from './internal/approval-deciders.js';
import { carrySdkIdentity, preparedInputOf } from './internal/sdk-registries.js';

/** The details the SDK passes to a tool's `invoke` (`details.toolCall.callId` is the call id). */
export type ToolCallDetails = Parameters<FunctionTool<any, any, any>['invoke']>[2];

/**
 * A value given as it is, or computed per call from the SDK's `RunContext` (its `context` is the
 * app's context object given to `run(agent, input, { context })`) and the call's details. A
 * resolver that returns `undefined` means "none".
 */
export type RunContextValue =
  | string
  | ((runContext: RunContext<any>, details: ToolCallDetails | undefined) => string | undefined);

/**
 * The parsed argument type of a function tool (what its `execute` receives): the zod or Standard
 * Schema output type of its `parameters`, or `Record<string, unknown>` when that is not an object
 * type or not known (a JSON schema, a hand-built tool).
 */
export type ToolArguments<T> = (
  T extends FunctionTool<any, infer Parameters extends ToolInputParameters, any>
    ? ToolExecuteArgument<Parameters>
    : unknown
) extends infer Arguments
  ? Arguments extends object
    ? Arguments
    : Record<string, unknown>
  : never;

/** Options of {@link fenceTool}. `TArguments`: the tool's parsed argument type, inferred. */
export interface FenceToolOptions<TArguments = Record<string, unknown>> {
  /** The guard (and through it the store) every worker of the agent shares. */
  readonly guard: Guard;
  /**
   * How repeating this tool affects the world, and how its key is made. Typed by the tool's
   * schema: `keyArguments` must name its arguments, and a `key` function gets its arguments.
   */
  readonly policy: IdempotencyPolicy<TArguments>;
  /** Tenant of each call. Default: the guard's. */
  readonly tenant?: RunContextValue | undefined;
  /**
   * Run id of each call (conversation, ticket, job): part of every `'run'`-scoped key (the default
   * scope), so it is REQUIRED for such a policy; without it {@link fenceTool} throws `PolicyError`.
   * A string, or `(runContext) => runContext.context.conversationId`. The SDK has no run id of its
   * own that outlives one `run()` call (its trace id is new per run, and absent when tracing is
   * off), so toolfence does not guess one. A resolver that returns `undefined` fails the call
   * closed with `KeyDerivationError` (the tool does not run, and `run()` rejects).
   */
  readonly runId?: RunContextValue | undefined;
  /**
   * When the call ends with `IndeterminateOutcomeError` (an effectful call whose outcome is
   * unknown) or `ExecutionAbandonedError`:
   * - `'throw'` (default): the tool throws it, so `run()` rejects (with the SDK's
   *   `ToolCallError` around it: {@link stopErrorOf} finds it) and the model is not called again.
   * - `'report'`: the tool answers with a model-readable text that names the tool, says the
   *   action may have happened and must not be retried; the run goes on.
   */
  readonly onIndeterminate?: StopMode | undefined;
}

/**
 * The text the SDK's default `errorFunction` answers with when a tool's `execute` throws. A
 * `tool()` made without `errorFunction` turns every error into it inside its own `invoke`, so this
 * text is the only sign the guard gets that the body failed.
 */
export const SDK_DEFAULT_TOOL_ERROR = 'An error occurred while running the tool. Please try again.';

/**
 * The body answered with the SDK's default error text: its `execute` threw and the SDK's
 * `errorFunction` swallowed the error. Thrown inside the guard so the call counts as failed
 * (EFFECTFUL: indeterminate; IDEMPOTENT: released), never recorded as a success.
 */
export class ToolBodyFailedError extends Error {
  override name = 'ToolBodyFailedError';
  constructor(
    readonly tool: string,
    /** What the SDK's `errorFunction` answered (shown to the model when the claim is released). */
    readonly answer: unknown,
  ) {
    super(
      `tool "${tool}" failed: its execute threw and the SDK's default errorFunction answered ` +
        `"${String(answer)}" (the original error is not visible; make the tool with errorFunction: null to pass it)`,
    );
  }
}

const originals = new WeakMap<object, FunctionTool<any, any, any>>();

/** The tool a fenced tool guards, or `undefined` for a tool that is not fenced. */
export function unfencedToolOf(tool: object): FunctionTool<any, any, any> | undefined {
  return originals.get(tool);
}

/**
 * Guard an OpenAI Agents `FunctionTool` (made with `tool({ ... })`) with toolfence.
 *
 * The result is a copy of `tool` with only `invoke` replaced: `name`, `description`, the JSON
 * schema `parameters`, `strict`, `needsApproval`, `isEnabled`, `timeoutMs`, guardrails and every
 * other property (symbols included) are the same values, and the facts the SDK keeps about the
 * original outside the object (the input parser `tool()` made, an MCP tool's server binding, an
 * `agent.asTool()` tool's agent) are registered for the copy too. So the model and the runner
 * cannot tell it from the original: `needsApproval` and the tool guardrails get the input parsed
 * by the tool's schema (trimmed, defaulted, coerced), and the body gets that same value. Each
 * call:
 *
 * 1. Its arguments are the ones the runner parsed with the tool's own parser (the SDK's). A call that does not parse
 *    goes to the tool as it is (the SDK answers it as without toolfence) and claims nothing.
 * 2. The key is made from the parsed arguments (or `keyArguments`, `key: 'call'` for the SDK's
 *    tool call id `details.toolCall.callId`, or your function), the tenant and the run id.
 * 3. A call whose key already finished gets the recorded output; the tool is not entered.
 *    Otherwise the original `invoke` runs inside `guard.run`.
 *
 * A tool made without `errorFunction` answers every error with the SDK's default text
 * ({@link SDK_DEFAULT_TOOL_ERROR}); that answer counts as a failure of the body (an EFFECTFUL
 * call becomes indeterminate) and, when the claim is released, reaches the model as before. A
 * tool with its own `errorFunction` has its answer recorded as the tool's output: give an
 * EFFECTFUL tool `errorFunction: null` (or one that rethrows) so the guard sees its errors.
 *
 * @throws PolicyError at wrap time: an invalid policy, `keyArguments` naming a parameter the
 *   tool's JSON schema lacks, or a `'run'`-scoped policy without a `runId` option.
 * @throws TypeError when `tool` is not a function tool, or when this version of
 *   `@openai/agents-core` keeps the tool's parser where toolfence cannot register the copy
 *   (fencing it would let `needsApproval` see the model's raw input).
 */
export function fenceTool<T extends FunctionTool<any, any, any>>(
  tool: T,
  options: FenceToolOptions<ToolArguments<T>>,
): T {
  if (tool === null || typeof tool !== 'object' || tool.type !== 'function') {
    throw new TypeError('fenceTool needs a function tool (made with tool({ ... }))');
  }
  if (options?.guard === undefined || typeof options.guard.run !== 'function') {
    throw new TypeError('fenceTool needs a guard');
  }
  const onIndeterminate = options.onIndeterminate ?? 'throw';
  if (onIndeterminate !== 'throw' && onIndeterminate !== 'report') {
    throw new TypeError(`onIndeterminate must be 'throw' or 'report', got ${String(onIndeterminate)}`);
  }
  const original = originals.get(tool) ?? tool;
  // The argument type is for the caller's policy only; at run time the arguments are the parsed input.
  const untyped = options as unknown as FenceToolOptions;
  const { guard, policy } = untyped;
  const parameterNames = parameterNamesOf(original.parameters);
  const resolved = guard.checkPolicy(
    policy,
    parameterNames === undefined ? { tool: original.name } : { tool: original.name, parameterNames },
  );
  if (resolved.scope === 'run' && options.runId === undefined) {
    throw new PolicyError(
      'runId',
      "is required for a 'run'-scoped policy (the default scope): pass runId to fenceTool / fenceTools / " +
        'fenceAgent, as a string or (runContext) => string (e.g. the conversation id in your context), ' +
        "or give the policy scope: 'tenant' for a key that holds across runs",
      { tool: original.name },
    );
  }
  const runScoped = resolved.scope === 'run';
  const invoke = fencedInvoke(original, untyped, runScoped, onIndeterminate);
  const fenced = Object.create(
    Object.getPrototypeOf(original),
    Object.getOwnPropertyDescriptors(original),
  ) as T & { invoke: typeof invoke };
  Object.defineProperty(fenced, 'invoke', {
    value: invoke,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  carrySdkIdentity(original, fenced);
  originals.set(fenced, original);
  if (resolved.approval === 'required') {
    registerApprovalDecider(fenced, (runContext, input, details, approved, audit) => {
      const call = guardedCallOf(original, untyped, runScoped, runContext, input, details);
      // Input that does not parse never reaches the guard (the SDK answers it): nothing to decide.
      if (call === undefined) return Promise.resolve(undefined);
      const { signal: _signal, ...decided } = call;
      return approved ? guard.approve(decided, audit) : guard.deny(decided, audit);
    });
  }
  return fenced;
}

/** The `invoke` of the fenced tool: the original's, run through the guard once its input parses. */
function fencedInvoke(
  original: FunctionTool<any, any, any>,
  options: FenceToolOptions,
  runScoped: boolean,
  onIndeterminate: 'throw' | 'report',
) {
  const { guard } = options;
  const name = original.name;
  return async function invoke(runContext: RunContext<any>, input: string, details?: ToolCallDetails) {
    const call = guardedCallOf(original, options, runScoped, runContext, input, details);
    // A call that does not parse is the SDK's to answer, exactly as without toolfence.
    if (call === undefined) return original.invoke(runContext, input, details);
    try {
      return await guard.run(
        call,
        // The same details object goes through: the SDK keys per-call state (usage, nested run
        // config, tracing) by its identity.
        async () => {
          const output = await original.invoke(runContext, input, details);
          if (output === SDK_DEFAULT_TOOL_ERROR) throw new ToolBodyFailedError(name, output);
          return output;
        },
      );
    } catch (error) {
      if (isCallStopError(error)) {
        if (onIndeterminate === 'report') return stopReport(error);
        throw error;
      }
      // Released (not an effectful call): the model sees what the SDK said, as without toolfence.
      if (error instanceof ToolBodyFailedError) return error.answer;
      throw error;
    }
  };
}

/**
 * The call the guard runs for one invocation (tool, parsed arguments, call id, tenant, run id), or
 * `undefined` when the input does not parse. The fenced `invoke` and a recorded approval
 * (record-approvals.ts) build it alike, so the approval is bound to the key the claim derives.
 * @throws KeyDerivationError a `'run'`-scoped policy whose run id resolver answered `undefined`
 */
function guardedCallOf(
  original: FunctionTool<any, any, any>,
  options: FenceToolOptions,
  runScoped: boolean,
  runContext: RunContext<any>,
  input: string,
  details: ToolCallDetails | undefined,
): GuardedCall | undefined {
  const parsed = parseInput(original, input, details);
  if (!parsed.ok) return undefined;
  const runId = resolveValue(options.runId, runContext, details);
  if (runScoped && runId === undefined) throw missingRunIdError(original.name);
  const callId = details?.toolCall?.callId;
  return {
    tool: original.name,
    arguments: keyArgumentsOf(parsed.value),
    callId: typeof callId === 'string' && callId.length > 0 ? callId : undefined,
    runId,
    tenant: resolveValue(options.tenant, runContext, details),
    policy: options.policy,
    signal: details?.signal,
  };
}

function parseInput(
  tool: FunctionTool<any, any, any>,
  input: string,
  details: ToolCallDetails | undefined,
): { ok: true; value: unknown } | { ok: false } {
  // The runner parsed this call already (before needsApproval) and hands that very value to the
  // body: the key is made of it, so a parser that is not pure (a default of a fresh id) cannot
  // give the key one value and the body another.
  let prepared = preparedInputOf(tool, input, details);
  if (prepared !== undefined) {
    return prepared.result.success ? { ok: true, value: prepared.result.value } : { ok: false };
  }
  try {
    // The tool's own parser (zod, JSON schema, standard schema), as the SDK's runner uses it.
    prepared = prepareFunctionToolInput(tool, input);
  } catch {
    return { ok: false };
  }
  if (prepared !== undefined) {
    return prepared.result.success ? { ok: true, value: prepared.result.value } : { ok: false };
  }
  // A hand-built FunctionTool (not made with tool()): its arguments are the model's JSON.
  try {
    return { ok: true, value: input === '' ? {} : JSON.parse(input) };
  } catch {
    return { ok: false };
  }
}

function resolveValue(
  value: RunContextValue | undefined,
  runContext: RunContext<any>,
  details: ToolCallDetails | undefined,
): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'function' ? value(runContext, details) : value;
}

function missingRunIdError(tool: string): KeyDerivationError {
  return new KeyDerivationError(
    tool,
    "no run id for a 'run'-scoped key: the runId resolver given to fenceTool / fenceTools / fenceAgent " +
      'returned undefined for this call (give run(agent, input, { context }) the value it reads)',
  );
}

/** The top-level parameter names of a JSON schema, or `undefined` when it names none. */
function parameterNamesOf(parameters: unknown): readonly string[] | undefined {
  if (parameters === null || typeof parameters !== 'object') return undefined;
  const properties = (parameters as { properties?: unknown }).properties;
  if (properties !== null && typeof properties === 'object') return Object.keys(properties);
  return undefined;
}

/** The arguments the key is made of: the parsed object, else `{ input: parsed }`. */
function keyArgumentsOf(parsed: unknown): Record<string, unknown> {
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
    const prototype = Object.getPrototypeOf(parsed);
    if (prototype === Object.prototype || prototype === null) return parsed as Record<string, unknown>;
  }
  return { input: parsed };
}
