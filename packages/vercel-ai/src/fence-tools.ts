import {
  ExecutionAbandonedError,
  type Guard,
  type GuardedCall,
  type IdempotencyPolicy,
  IndeterminateOutcomeError,
  KeyDerivationError,
  PolicyError,
} from '@toolfence/core';
import type { InferToolInput, ToolSet } from 'ai';
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

/** The error after which no further step of the run may go on. */
export type StoppingError = IndeterminateOutcomeError | ExecutionAbandonedError;

/** The call an {@link FenceToolsOptions.onIndeterminate} hook is told about. */
export interface StoppedCall {
  readonly toolName: string;
  readonly toolCallId: string;
  readonly input: unknown;
}

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
  readonly policies: { readonly [NAME in keyof TOOLS]?: IdempotencyPolicy<InputOf<TOOLS[NAME]>> };
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
  readonly onIndeterminate?: ((error: StoppingError, call: StoppedCall) => void) | undefined;
}

type ExecuteFunction = (input: unknown, options: ToolExecuteOptions) => unknown;

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
 * Marks a set-up fault (no run id for a run-scoped policy): not the model's to fix, so
 * {@link stopOnIndeterminate} ends the run with it (generateText rejects) rather than let the
 * model read it. A registered symbol, so another copy of the package recognises it.
 */
const SETUP_FAULT = Symbol.for('toolfence.setupFault');

/** True for the error of a guarded call that had no run id (a set-up fault, not the model's). */
export function isSetupFault(error: unknown): error is KeyDerivationError {
  return (
    KeyDerivationError.isInstance(error) &&
    (error as unknown as Record<symbol, unknown>)[SETUP_FAULT] === true
  );
}

function missingRunIdError(toolName: string): KeyDerivationError {
  const error = new KeyDerivationError(
    toolName,
    "no run id for a 'run'-scoped key. Pass the conversation's id to fenceTools(tools, { runId }) " +
      '(a string, or `(options, toolName) => string`), or give it per call in the execution context ' +
      'with toolfenceContext({ runId }) (AI SDK 6: experimental_context; AI SDK 7: toolsContext), ' +
      "or give the policy scope: 'tenant' for a key that holds across runs",
  );
  Object.defineProperty(error, SETUP_FAULT, { value: true });
  return error;
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
      const guarded = wrap(
        toolName,
        tool,
        execute as ExecuteFunction,
        policy,
        resolved.scope === 'run' && resolved.kind !== 'read_only',
        options,
      );
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

function fencedFunction(
  toolName: string,
  tool: object,
  execute: ExecuteFunction,
  policy: IdempotencyPolicy,
  runScoped: boolean,
  options: FenceToolsOptions<ToolSet>,
): ExecuteFunction {
  return async (input, executeOptions) => {
    const call = guardedCall(toolName, input, executeOptions, policy, runScoped, options);
    try {
      return await options.guard.run(call, async (context) => {
        const result = await execute.call(tool, input, { ...executeOptions, abortSignal: context.signal });
        if (!isAsyncIterable(result)) return result;
        // Returned, not declared, as a stream: too late to stay a generator; the last value counts.
        let last: unknown;
        for await (const value of result) last = value;
        return last;
      });
    } catch (error) {
      throw stopped(error, toolName, input, executeOptions, options);
    }
  };
}

function fencedGenerator(
  toolName: string,
  tool: object,
  execute: ExecuteFunction,
  policy: IdempotencyPolicy,
  runScoped: boolean,
  options: FenceToolsOptions<ToolSet>,
): ExecuteFunction {
  return async function* (input: unknown, executeOptions: ToolExecuteOptions) {
    const call = guardedCall(toolName, input, executeOptions, policy, runScoped, options);
    // The body drains the tool's generator inside the guard (so the lease, the signal and
    // currentToolCall() cover it) and hands each value to this generator through a queue.
    const queue: unknown[] = [];
    let wake: (() => void) | undefined;
    const notify = () => {
      wake?.();
      wake = undefined;
    };
    let bodyResult: { value: unknown } | undefined;
    let settlement: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
    options.guard
      .run(call, async (context) => {
        const stream = execute.call(tool, input, { ...executeOptions, abortSignal: context.signal });
        let last: unknown;
        for await (const value of stream as AsyncIterable<unknown>) {
          last = value;
          queue.push(value);
          notify();
        }
        bodyResult = { value: last };
        return last;
      })
      .then(
        (value) => {
          settlement = { ok: true, value };
        },
        (error: unknown) => {
          settlement = { ok: false, error };
        },
      )
      .finally(notify);

    for (;;) {
      while (queue.length > 0) yield queue.shift();
      if (settlement !== undefined) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
    // The loop breaks only once settled; queued values were all yielded above.
    const settled = settlement as { ok: true; value: unknown } | { ok: false; error: unknown };
    if (!settled.ok) throw stopped(settled.error, toolName, input, executeOptions, options);
    // A repeat (or an answer taken from another holder) yields the recorded final value; the
    // SDK takes the last yielded value as the output.
    if (bodyResult === undefined || bodyResult.value !== settled.value) yield settled.value;
  };
}

function guardedCall(
  toolName: string,
  input: unknown,
  executeOptions: ToolExecuteOptions,
  policy: IdempotencyPolicy,
  runScoped: boolean,
  options: FenceToolsOptions<ToolSet>,
): GuardedCall {
  const fromContext = contextValues(executeOptions);
  const runId = fromContext?.runId ?? resolveValue(options.runId, executeOptions, toolName);
  if (runScoped && (runId === undefined || runId === '')) throw missingRunIdError(toolName);
  return {
    tool: toolName,
    arguments: input as Record<string, unknown>,
    callId: executeOptions?.toolCallId,
    tenant: fromContext?.tenant ?? resolveValue(options.tenant, executeOptions, toolName),
    runId,
    policy,
    signal: executeOptions?.abortSignal,
  };
}

function contextValues(executeOptions: ToolExecuteOptions): ToolfenceContext['toolfence'] | undefined {
  for (const context of [executeOptions?.context, executeOptions?.experimental_context]) {
    const values = (context as Partial<ToolfenceContext> | null | undefined)?.toolfence;
    if (values !== null && typeof values === 'object') {
      return {
        tenant: typeof values.tenant === 'string' ? values.tenant : undefined,
        runId: typeof values.runId === 'string' ? values.runId : undefined,
      };
    }
  }
  return undefined;
}

function resolveValue(
  value: CallValue | undefined,
  executeOptions: ToolExecuteOptions,
  toolName: string,
): string | undefined {
  return typeof value === 'function' ? value(executeOptions, toolName) : value;
}

/** Report an error that stops the run to the hook; return the error to rethrow unchanged. */
function stopped(
  error: unknown,
  toolName: string,
  input: unknown,
  executeOptions: ToolExecuteOptions,
  options: FenceToolsOptions<ToolSet>,
): unknown {
  if (isStoppingError(error) && options.onIndeterminate !== undefined) {
    try {
      options.onIndeterminate(error, { toolName, toolCallId: executeOptions?.toolCallId, input });
    } catch {
      // A hook must not change what the SDK sees.
    }
  }
  return error;
}

/** True for the errors after which the run must not go on. */
export function isStoppingError(error: unknown): error is StoppingError {
  return IndeterminateOutcomeError.isInstance(error) || ExecutionAbandonedError.isInstance(error);
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
