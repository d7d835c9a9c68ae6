// fenceTools: an AI SDK ToolSet whose tools with a policy run through the guard, and the shapes
// of its options and of the per-call context (toolfenceContext). The guarded `execute` itself is
// fenced-execute.ts.
import {
  type CallStopError,
  type Guard,
  type IdempotencyPolicy,
  PolicyError,
  type PolicyMap,
} from '@toolfence/core';
import type { InferToolInput, ToolSet } from 'ai';
import {
  type ExecuteFunction,
  fencedFunction,
  fencedGenerator,
  isAsyncGeneratorFunction,
} from './fenced-execute.js';
import { parameterNamesOf } from './parameter-names.js';

/**
 * The part of the AI SDK's tool execution options the adapter reads. AI SDK 6 passes
 * `experimental_context` (one value for the whole call); AI SDK 7 passes the tool's own `context`
 * (the tool's entry of `toolsContext`).
 */
export interface ToolExecuteOptions {
  readonly toolCallId: string;
  readonly abortSignal?: AbortSignal | undefined;
  /** AI SDK 6: the `experimental_context` given to `generateText` / `streamText`. */
  readonly experimental_context?: unknown;
  /** AI SDK 7: this tool's entry of `toolsContext`. */
  readonly context?: unknown;
}

/**
 * Where the adapter looks for a per-call tenant and run id in the execution context:
 * `experimental_context` (AI SDK 6) or the tool's `context` (AI SDK 7) holding
 * `{ toolfence: { tenant?, runId? } }`. Build it with {@link toolfenceContext}.
 */
export interface ToolfenceContext {
  readonly toolfence: {
    readonly tenant?: string | undefined;
    readonly runId?: string | undefined;
  };
}

/**
 * A fixed value, or a function of the call's execution options (and the tool's name) that
 * returns it; `undefined` falls back to the next source.
 */
export type CallValue = string | ((options: ToolExecuteOptions, toolName: string) => string | undefined);

/** The call an {@link FenceToolsOptions.onStop} hook is told about. */
export interface StoppedCall {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly input: unknown;
}

/**
 * A policy per tool name of a `ToolSet` (core's `PolicyMap`), each typed by that tool's input
 * schema ({@link InputOf}).
 */
export type PoliciesFor<TOOLS extends ToolSet> = PolicyMap<{ [NAME in keyof TOOLS]: InputOf<TOOLS[NAME]> }>;

/** Options of {@link fenceTools}. */
export interface FenceToolsOptions<TOOLS extends ToolSet> {
  /** The guard that runs every guarded call (and owns the store). */
  readonly guard: Guard;
  /**
   * Policy per tool name (own properties only), typed by each tool's input schema: a
   * `keyArguments` name the schema lacks is a compile error, and a `key` function gets the tool's
   * input type. A tool without an entry (or without `execute`), and a tool already fenced, is
   * passed through unchanged. Naming a tool that is not in the set is a {@link PolicyError}.
   */
  readonly policies: PoliciesFor<TOOLS>;
  /**
   * Tenant of every call. Resolution order per call: the execution context's
   * `toolfence.tenant`, then this option, then the guard's tenant.
   */
  readonly tenant?: CallValue | undefined;
  /**
   * Run id (conversation, thread, job) of every call; required by `'run'`-scoped policies (the
   * default scope): without one the call fails closed with `KeyDerivationError`. Resolution order
   * per call: the execution context's `toolfence.runId`, then this option.
   */
  readonly runId?: CallValue | undefined;
  /**
   * Called (synchronously, before the error reaches the SDK) when a call ends in
   * `IndeterminateOutcomeError` or `ExecutionAbandonedError`: to alert, or to abort work the
   * caller owns. An exception thrown by the hook is ignored.
   *
   * To make `generateText` reject with the error use `stopOnIndeterminate({ rethrow: true })`.
   * Aborting the caller's `abortSignal` controller from here (`controller.abort(error)`) also
   * rejects with the error, but only if the SDK goes on to another step (it checks the signal
   * before a model call), not when the failing step was the last one.
   */
  readonly onStop?: ((error: CallStopError, call: StoppedCall) => void) | undefined;
}

/**
 * A tool's input type, or `Record<string, unknown>` when it is not an object type: what its policy's
 * `keyArguments` and `key` function see. Exported as `ToolInputOf`.
 */
export type InputOf<TOOL> = (
  TOOL extends ToolSet[string]
    ? InferToolInput<TOOL>
    : unknown
) extends infer Input
  ? Input extends object
    ? Input
    : Record<string, unknown>
  : never;

/**
 * The registered symbol on the `execute` of every tool `fenceTools` guarded (shared by every copy
 * of the package). Such a tool is passed through when it is fenced again: guarding it twice would
 * run the inner guard inside the outer one's body, whose re-entrancy check reads as an effect.
 */
const FENCED_EXECUTE = Symbol.for('toolfence.fencedTool');

/** True for an AI SDK tool whose `execute` is already guarded by toolfence. */
export function isFencedTool(tool: unknown): boolean {
  const execute = (tool as { execute?: unknown } | null | undefined)?.execute;
  return (
    typeof execute === 'function' && (execute as unknown as Record<symbol, unknown>)[FENCED_EXECUTE] === true
  );
}

/**
 * Guard the tools of an AI SDK `ToolSet` with toolfence.
 *
 * Returns a tool set with the same keys in which every tool that has a policy and an `execute`
 * is a shallow copy of the original (description, input schema, `needsApproval`,
 * `providerOptions`, `toModelOutput`, `onInputStart` and every other field kept) whose
 * `execute` runs through {@link Guard.run} with the SDK's `toolCallId` as the call id. The tool
 * receives the guard's signal as `abortSignal`: it aborts when the caller's `abortSignal` does,
 * when the lease is lost, or at the policy's `timeoutMs`.
 *
 * An async-generator `execute` (streamed preliminary results) stays a generator: the first run
 * passes every yielded value through and records the last one (the SDK's final output); a
 * repeat yields the recorded final value once. A non-generator `execute` that returns an async
 * iterable is drained inside the guard and its last value is the output.
 *
 * A replay answers the current call: the SDK builds the result part with the current
 * `toolCallId`, only the output is the recorded one.
 *
 * Errors reach the SDK as they always do (a `tool-error` part the model sees, the loop goes on);
 * the guard's `IndeterminateOutcomeError` and `ExecutionAbandonedError` should end the run: add
 * {@link stopOnIndeterminate} to `stopWhen` and read the error with {@link indeterminateErrorOf},
 * or use `stopOnIndeterminate({ rethrow: true })` to have `generateText` reject with it.
 *
 * @throws PolicyError at wrap time: an invalid policy, a `keyArguments` name that is not a
 *   parameter of the tool's input schema (zod object shape, or JSON schema `properties`), or a
 *   policy for a tool the set does not have.
 */
export function fenceTools<TOOLS extends ToolSet>(tools: TOOLS, options: FenceToolsOptions<TOOLS>): TOOLS {
  const { guard, policies } = options;
  if (guard === undefined || typeof guard.run !== 'function') {
    throw new TypeError('fenceTools needs a guard');
  }
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('fenceTools needs a policies object (tool name -> policy)');
  }
  const policyOf = (name: string): IdempotencyPolicy | undefined =>
    Object.hasOwn(policies, name)
      ? (policies as Record<string, IdempotencyPolicy | undefined>)[name]
      : undefined;
  for (const name of Object.keys(policies)) {
    if (!Object.hasOwn(tools, name) && policyOf(name) !== undefined) {
      throw new PolicyError(
        'policies',
        `names tool "${name}", which is not in the tool set (tools: ${Object.keys(tools).join(', ') || 'none'}); ` +
          'a misspelt name would leave a tool unguarded',
        { tool: name },
      );
    }
  }

  const fenced: Record<string, unknown> = {};
  for (const [toolName, tool] of Object.entries(tools)) {
    const policy = policyOf(toolName);
    const execute = (tool as { execute?: unknown }).execute;
    let result: unknown = tool;
    if (policy !== undefined && typeof execute === 'function' && !isFencedTool(tool)) {
      const resolved = guard.checkPolicy(policy, {
        tool: toolName,
        parameterNames: parameterNamesOf((tool as { inputSchema?: unknown }).inputSchema),
      });
      const wrap = isAsyncGeneratorFunction(execute) ? fencedGenerator : fencedFunction;
      const guarded = wrap({
        toolName,
        tool,
        execute: execute as ExecuteFunction,
        policy,
        runScoped: resolved.scope === 'run' && resolved.kind !== 'read_only',
        options,
      });
      Object.defineProperty(guarded, FENCED_EXECUTE, { value: true });
      result = { ...tool, execute: guarded };
    }
    // A tool may be named "__proto__": define, never assign.
    Object.defineProperty(fenced, toolName, {
      value: result,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return fenced as TOOLS;
}

/**
 * The `experimental_context` (AI SDK 6) or a tool's `context` (AI SDK 7) value that carries a
 * per-call tenant and run id to the fenced tools, merged into `context` when given.
 *
 * @example generateText({ ..., experimental_context: toolfenceContext({ runId: threadId }) })
 */
export function toolfenceContext<C extends object = {}>(
  value: { tenant?: string | undefined; runId?: string | undefined },
  context?: C,
): C & ToolfenceContext {
  return { ...(context as C), toolfence: { ...value } };
}
