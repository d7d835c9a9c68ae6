// The shapes fenceTools and the guarded `execute` share: its options, the execution options it
// reads and the per-call context. A leaf: fence-tools.ts and fenced-execute.ts both import it.
import type { CallStopError, Guard, PolicyMap } from '@toolfence/core';
import type { InferToolInput, ToolSet } from 'ai';

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
