// The guarded `execute` of one fenced tool: a function runs its tool inside Guard.run (a returned
// stream drained there); an async generator stays one, its values handed out through a queue
// while the guard's body drains the tool. The call's tenant and run id come from the execution
// context, then from fenceTools' options.
import {
  type ApprovalOptions,
  type DecideResult,
  type GuardedCall,
  type IdempotencyPolicy,
  isCallStopError,
} from '@toolfence/core';
import type { ToolSet } from 'ai';
import type {
  CallValue,
  FenceToolsOptions,
  ToolExecuteOptions,
  ToolfenceContext,
} from './fence-tools-options.js';
import { missingRunIdError } from './setup-fault.js';

export type ExecuteFunction = (input: unknown, options: ToolExecuteOptions) => unknown;

/** A tool being fenced: its name, the tool itself (`this` of its `execute`), and how it is guarded. */
export interface FencedTool {
  readonly toolName: string;
  readonly tool: object;
  readonly execute: ExecuteFunction;
  readonly policy: IdempotencyPolicy;
  /** The policy needs a run id (scope 'run', not read-only). */
  readonly runScoped: boolean;
  readonly options: FenceToolsOptions<ToolSet>;
}

/**
 * Records an operator's decision on one call of a fenced tool whose policy needs an approval:
 * `guard.approve` / `guard.deny` with the very call the guarded `execute` would run (tool, input,
 * `toolCallId`, tenant and run id resolved from the same options), so the claim of that execute
 * consumes it. Kept on the guarded `execute` under {@link APPROVAL_DECIDER}.
 */
export type ApprovalDecider = (
  input: unknown,
  executeOptions: ToolExecuteOptions,
  approved: boolean,
  audit: ApprovalOptions,
) => Promise<DecideResult>;

/** The registered symbol under which a guarded `execute` keeps its {@link ApprovalDecider}. */
export const APPROVAL_DECIDER = Symbol.for('toolfence.vercelAi.approvalDecider');

/** The decider of a fenced tool whose policy needs an approval (`approval: 'required'`). */
export function approvalDeciderOf(fenced: FencedTool): ApprovalDecider {
  return (input, executeOptions, approved, audit) => {
    // Not `signal`: a decision is no run, nothing to abort.
    const { signal: _signal, ...call } = guardedCall(fenced, input, executeOptions);
    return approved ? fenced.options.guard.approve(call, audit) : fenced.options.guard.deny(call, audit);
  };
}

/** The guarded `execute` of a tool whose `execute` is a function (returning a value or a stream). */
export function fencedFunction(fenced: FencedTool): ExecuteFunction {
  const { toolName, tool, execute, options } = fenced;
  return async (input, executeOptions) => {
    const call = guardedCall(fenced, input, executeOptions);
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

/** The guarded `execute` of a tool whose `execute` is an async generator (preliminary results). */
export function fencedGenerator(fenced: FencedTool): ExecuteFunction {
  const { toolName, tool, execute, options } = fenced;
  return async function* (input: unknown, executeOptions: ToolExecuteOptions) {
    const call = guardedCall(fenced, input, executeOptions);
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

function guardedCall(fenced: FencedTool, input: unknown, executeOptions: ToolExecuteOptions): GuardedCall {
  const { toolName, policy, runScoped, options } = fenced;
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
  if (isCallStopError(error) && options.onStop !== undefined) {
    try {
      options.onStop(error, { toolName, toolCallId: executeOptions?.toolCallId, input });
    } catch {
      // A hook must not change what the SDK sees.
    }
  }
  return error;
}

export function isAsyncGeneratorFunction(fn: unknown): boolean {
  return Object.prototype.toString.call(fn) === '[object AsyncGeneratorFunction]';
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
