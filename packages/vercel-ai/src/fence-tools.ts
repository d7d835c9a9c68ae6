// fenceTools: an AI SDK ToolSet whose tools with a policy run through the guard, and the
// per-call context (toolfenceContext). The shapes of its options are fence-tools-options.ts, the
// guarded `execute` itself is fenced-execute.ts.
import { type IdempotencyPolicy, PolicyError } from '@toolfence/core';
import type { ToolSet } from 'ai';
import type { FenceToolsOptions, ToolfenceContext } from './fence-tools-options.js';
import {
  APPROVAL_DECIDER,
  approvalDeciderOf,
  type ExecuteFunction,
  fencedFunction,
  fencedGenerator,
  isAsyncGeneratorFunction,
} from './fenced-execute.js';
import { parameterNamesOf } from './parameter-names.js';

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
      const fencedTool = {
        toolName,
        tool,
        execute: execute as ExecuteFunction,
        policy,
        runScoped: resolved.scope === 'run' && resolved.kind !== 'read_only',
        options,
      };
      const guarded = wrap(fencedTool);
      Object.defineProperty(guarded, FENCED_EXECUTE, { value: true });
      if (resolved.approval === 'required') {
        // recordApprovals finds the decider here: it decides on the call exactly as this execute claims it.
        Object.defineProperty(guarded, APPROVAL_DECIDER, { value: approvalDeciderOf(fencedTool) });
      }
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
