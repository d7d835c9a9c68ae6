import { MastraNonRetryableError } from '@mastra/core/error';
import type { Tool, ToolExecutionContext } from '@mastra/core/tools';
import {
  type Guard,
  type IdempotencyPolicy,
  KeyDerivationError,
  PolicyError,
  type StopMode,
} from '@toolfence/core';
import { endRunWith } from './internal/run-stops.js';
import { isCallStopError, stopReport } from './internal/stop-errors.js';

/** Any Mastra tool made with `createTool({ ... })` or `new Tool({ ... })`. */
export type MastraTool = Tool<any, any, any, any, any, any, any>;

/**
 * The validated input type of a Mastra tool (what its `execute` receives as `inputData`), or
 * `Record<string, unknown>` when that is not an object type or not known.
 */
export type ToolArguments<T> = (
  T extends Tool<infer Input, any, any, any, any, any, any>
    ? Input
    : unknown
) extends infer A
  ? A extends object
    ? A
    : Record<string, unknown>
  : never;

/**
 * A value given as it is, or computed per call from the tool's execution context (Mastra's
 * `ToolExecutionContext`: `requestContext`, `agent`, `workflow`, ...) and its input. A resolver
 * that returns `undefined` means "none".
 */
export type ContextValue =
  | string
  | ((context: ToolExecutionContext<any, any, any> | undefined, input: unknown) => string | undefined);

/** Options of {@link fenceTool}. `TArguments`: the tool's input type, inferred. */
export interface FenceToolOptions<TArguments = Record<string, unknown>> {
  /** The guard (and through it the store) every worker shares. */
  readonly guard: Guard;
  /**
   * How repeating this tool affects the world, and how its key is made. Typed by the tool's
   * input schema: `keyArguments` must name its inputs, and a `key` function gets its input.
   */
  readonly policy: IdempotencyPolicy<TArguments>;
  /** Tenant of each call. Default: the guard's. */
  readonly tenant?: ContextValue | undefined;
  /**
   * Run id of each call: part of every `'run'`-scoped key (the default scope). Default: Mastra's
   * own, the workflow run id (`context.workflow.runId`) inside a workflow, else the agent run id
   * (the `runId` that `resumeStream()` / `approveToolCall()` take), both stable across Mastra's
   * step retries and resumes. A call with neither fails closed with `KeyDerivationError`.
   */
  readonly runId?: ContextValue | undefined;
  /**
   * When a call ends with `IndeterminateOutcomeError` or `ExecutionAbandonedError`:
   * - `'throw'` (default): in a workflow step, the step fails with Mastra's
   *   `MastraNonRetryableError` (the stop as its `cause`), so neither the step's `retries` nor the
   *   workflow's `retryConfig` run it again and the run ends `failed`; in the `generate()` of an
   *   agent made with `fenceAgent` the run ends and rejects with the stop; elsewhere in an agent's
   *   loop Mastra answers the model with the tool error (a repeat is refused the same way).
   * - `'report'`: the tool answers with a model-readable text that says the action may have
   *   happened and must not be retried.
   */
  readonly onIndeterminate?: StopMode | undefined;
}

/** A tool body that called `suspend()`: nothing was done yet, so its claim is released. */
class ToolSuspended extends Error {
  override name = 'ToolSuspended';
  constructor(readonly value: unknown) {
    super('the tool suspended');
  }
}

const originals = new WeakMap<object, MastraTool>();

/** The tool a fenced tool guards, or `undefined` for a tool that is not fenced. */
export function unfencedToolOf(tool: object): MastraTool | undefined {
  return originals.get(tool);
}

/**
 * Guard a Mastra tool with toolfence. The result is a copy of `tool` (same prototype, id,
 * schemas, `requireApproval`, `toModelOutput`, every other property) with only `execute`
 * replaced. Each call:
 *
 * 1. Its input is validated with the tool's own input schema; input that does not validate goes
 *    to the tool as it is (Mastra answers with its validation error) and claims nothing.
 * 2. The key is made from the validated input (or `keyArguments`, `key: 'call'` for Mastra's tool
 *    call id `context.agent.toolCallId`, or your function), the tenant and the run id.
 * 3. A call whose key already finished gets the recorded output; otherwise the original
 *    `execute` runs inside `guard.run`, with `context.abortSignal` replaced by the guard's signal
 *    (aborted with the caller's, a lost lease or `timeoutMs`).
 *
 * A body that returns after its signal aborted is not recorded as a success: the call fails with
 * the abort reason (EFFECTFUL: indeterminate; IDEMPOTENT: released). A body that called
 * `suspend()` releases its claim, so the resumed call runs it again with `resumeData`.
 *
 * @throws PolicyError at wrap time for an invalid policy, or `keyArguments` naming an input the
 *   tool's schema lacks.
 * @throws TypeError when `tool` has no `execute`, or `options` no guard.
 */
export function fenceTool<T extends MastraTool>(tool: T, options: FenceToolOptions<ToolArguments<T>>): T {
  if (tool === null || typeof tool !== 'object' || typeof tool.execute !== 'function') {
    throw new TypeError(
      'fenceTool needs a Mastra tool with an execute function (made with createTool({ ... }))',
    );
  }
  if (options?.guard === undefined || typeof options.guard.run !== 'function') {
    throw new TypeError('fenceTool needs a guard');
  }
  const onIndeterminate = options.onIndeterminate ?? 'throw';
  if (onIndeterminate !== 'throw' && onIndeterminate !== 'report') {
    throw new TypeError(`onIndeterminate must be 'throw' or 'report', got ${String(onIndeterminate)}`);
  }
  const original = originals.get(tool) ?? tool;
  const untyped = options as unknown as FenceToolOptions;
  const userPolicy = untyped.policy;
  if (userPolicy === null || typeof userPolicy !== 'object') {
    throw new PolicyError('policy', 'must be an object', { tool: original.id });
  }
  // The claim of a body that only suspended is given back, whatever the kind.
  const policy: IdempotencyPolicy = {
    ...userPolicy,
    isNoEffectError: (error: unknown) =>
      error instanceof ToolSuspended || (userPolicy.isNoEffectError?.(error) ?? false),
  };
  const parameterNames = parameterNamesOf(original.inputSchema);
  const resolved = untyped.guard.checkPolicy(
    policy,
    parameterNames === undefined ? { tool: original.id } : { tool: original.id, parameterNames },
  );
  const execute = fencedExecute(original, { ...untyped, policy }, resolved.scope === 'run', onIndeterminate);
  const fenced = Object.create(
    Object.getPrototypeOf(original),
    Object.getOwnPropertyDescriptors(original),
  ) as T;
  Object.defineProperty(fenced, 'execute', {
    value: execute,
    writable: true,
    enumerable: true,
    configurable: true,
  });
  originals.set(fenced, original);
  return fenced;
}

type Execute = NonNullable<MastraTool['execute']>;

function fencedExecute(
  original: MastraTool,
  options: FenceToolOptions,
  runScoped: boolean,
  onIndeterminate: StopMode,
): Execute {
  const { guard, policy } = options;
  const name = original.id;
  const originalExecute = original.execute as Execute;
  return async function execute(inputData: unknown, context: any) {
    const validated = await validateInput(original, inputData);
    // Input that does not validate is Mastra's to answer, exactly as without toolfence.
    if (!validated.ok) return originalExecute.call(original, inputData, context);
    const runId = resolveValue(options.runId, context, inputData) ?? mastraRunIdOf(context);
    if (runScoped && runId === undefined) {
      throw new KeyDerivationError(
        name,
        "no run id for a 'run'-scoped key: the call has neither a workflow run id nor an agent run id " +
          '(a direct execute() call): give fenceTool a runId, or the policy another scope',
      );
    }
    const callId = context?.agent?.toolCallId;
    const inWorkflow = context?.agent === undefined && context?.workflow !== undefined;
    try {
      return await guard.run(
        {
          tool: name,
          arguments: keyArgumentsOf(validated.value),
          callId: typeof callId === 'string' && callId.length > 0 ? callId : undefined,
          runId,
          tenant: resolveValue(options.tenant, context, inputData),
          policy,
          signal: context?.abortSignal,
        },
        async ({ signal }) => {
          let suspended = false;
          // The same context object goes through (Mastra keys per-call facts by its identity),
          // with the guard's signal and suspend functions that tell the guard the body suspended.
          if (context !== null && typeof context === 'object') {
            context.abortSignal = signal;
            for (const holder of [context, context.agent, context.workflow]) {
              if (holder !== null && typeof holder === 'object' && typeof holder.suspend === 'function') {
                const suspend = holder.suspend;
                holder.suspend = (...args: unknown[]) => {
                  suspended = true;
                  return suspend(...args);
                };
              }
            }
          }
          const output = await originalExecute.call(original, inputData, context);
          if (suspended) throw new ToolSuspended(output);
          // A body that gave up when it was aborted did not finish: never recorded as a success.
          if (signal.aborted) throw signal.reason ?? new Error(`tool "${name}" was aborted`);
          return output;
        },
      );
    } catch (error) {
      if (error instanceof ToolSuspended) return error.value;
      if (isCallStopError(error)) {
        if (onIndeterminate === 'report') return stopReport(error);
        if (inWorkflow) throw nonRetryable(error);
        // In a fenced agent's generate(): the run ends, rejecting with the stop.
        endRunWith(error, typeof callId === 'string' && callId.length > 0 ? callId : undefined);
        throw error;
      }
      throw error;
    }
  };
}

/** The stop as Mastra's non-retryable step failure (the stop is its `cause`). */
export function nonRetryable(error: Error): MastraNonRetryableError {
  const wrapped = new MastraNonRetryableError(error.message, { cause: error });
  return wrapped;
}

async function validateInput(
  tool: MastraTool,
  input: unknown,
): Promise<{ ok: true; value: unknown } | { ok: false }> {
  const schema = tool.inputSchema as { '~standard'?: { validate?: (value: unknown) => unknown } } | undefined;
  const validate = schema?.['~standard']?.validate;
  if (typeof validate !== 'function') return { ok: true, value: input };
  try {
    const result = (await validate(input)) as { value?: unknown; issues?: unknown };
    return result.issues === undefined ? { ok: true, value: result.value } : { ok: false };
  } catch {
    return { ok: false };
  }
}

/** Mastra's run id of a call: the workflow's inside a workflow, else the agent run's. */
function mastraRunIdOf(context: any): string | undefined {
  const workflowRunId = context?.workflow?.runId;
  if (typeof workflowRunId === 'string' && workflowRunId.length > 0) return workflowRunId;
  // The agent loop passes its run id on the context (not in Mastra's declared type).
  const agentRunId = context?.runId;
  return typeof agentRunId === 'string' && agentRunId.length > 0 ? agentRunId : undefined;
}

function resolveValue(value: ContextValue | undefined, context: any, input: unknown): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'function' ? value(context, input) : value;
}

/** The top-level property names of the tool's input schema (zod 4, or its JSON schema). */
function parameterNamesOf(schema: unknown): readonly string[] | undefined {
  if (schema === null || typeof schema !== 'object') return undefined;
  const shape = (schema as { shape?: unknown }).shape;
  if (shape !== null && typeof shape === 'object') return Object.keys(shape);
  const toJson = (schema as { '~standard'?: { jsonSchema?: { input?: (o: unknown) => unknown } } })[
    '~standard'
  ]?.jsonSchema?.input;
  if (typeof toJson === 'function') {
    try {
      const json = toJson({ target: 'draft-07' }) as { properties?: unknown };
      if (json?.properties !== null && typeof json?.properties === 'object')
        return Object.keys(json.properties);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/** The arguments the key is made of: the validated object, else `{ input: value }`. */
function keyArgumentsOf(value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const prototype = Object.getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === null) return value as Record<string, unknown>;
  }
  return { input: value };
}
