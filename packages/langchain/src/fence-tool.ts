import { parseCallbackConfigArg } from '@langchain/core/callbacks/manager';
import { type ToolCall, ToolMessage } from '@langchain/core/messages';
import { ensureConfig, mergeConfigs } from '@langchain/core/runnables';
import { StructuredTool, type StructuredToolInterface, type ToolRunnableConfig } from '@langchain/core/tools';
import type { InferInteropZodOutput, InteropZodType } from '@langchain/core/utils/types';
import type {
  ApprovalOptions,
  DecideResult,
  Guard,
  GuardedCall,
  IdempotencyPolicy,
  ResolvedPolicy,
  StopMode,
} from '@toolfence/core';
import {
  type ConfigValue,
  missingRunIdError,
  resolveConfigValue,
  resolveRunId,
} from './internal/call-scope.js';
import { isCallStopError, isGraphBubbleUp, stopReport } from './internal/stop-errors.js';
import {
  type ArgumentSchema,
  argumentSchemaOf,
  keyArgumentsOf,
  parameterNamesOf,
  parseArguments,
} from './internal/tool-arguments.js';
import { ERROR_STATUS_TAG, messageContent } from './internal/tool-output.js';
import { markNotRetryable } from './retry-on.js';

export type { ConfigValue } from './internal/call-scope.js';

/** Options of {@link fenceTool}. `TArguments`: the tool's parsed argument type, inferred. */
export interface FenceToolOptions<TArguments = Record<string, unknown>> {
  /** The guard (and through it the store) every worker of the agent shares. */
  readonly guard: Guard;
  /**
   * How repeating this tool affects the world, and how its key is made. Typed by the tool's
   * schema: `keyArguments` must name its arguments, and a `key` function gets its arguments.
   */
  readonly policy: IdempotencyPolicy<TArguments>;
  /**
   * When the call ends with `IndeterminateOutcomeError` (an effectful call whose outcome is
   * unknown) or `ExecutionAbandonedError`:
   * - `'throw'` (default): `invoke` rejects with that error. Note that a LangGraph `ToolNode`
   *   (and `createAgent` without {@link toolfenceMiddleware}) catches tool errors by default and
   *   shows them to the model; use `toolfenceMiddleware`, or `handleToolErrors: false`, for the
   *   error to stop the run.
   * - `'report'`: resolve with a model-readable error `ToolMessage` (status `'error'`) that names
   *   the tool, says the action may have happened and must not be retried.
   */
  readonly onIndeterminate?: StopMode;
  /** Tenant of each call: a string, or a resolver of the call's config. Default: the guard's. */
  readonly tenant?: ConfigValue;
  /**
   * Run id of each call (part of `'run'`-scoped keys): a string, or a resolver of the call's
   * config. Default: `configurable.thread_id`.
   */
  readonly runId?: ConfigValue;
}

/**
 * The parsed argument type of a LangChain tool (what its function receives): the schema's output
 * type, or `Record<string, unknown>` when it is not an object type or not known.
 */
export type ToolArguments<T> = (
  T extends StructuredTool<any, infer Output, any, any, any>
    ? Output
    : T extends { schema: infer Schema extends InteropZodType }
      ? InferInteropZodOutput<Schema>
      : unknown
) extends infer Arguments
  ? Arguments extends object
    ? Arguments
    : Record<string, unknown>
  : never;

/** Where a stop thrown by a fenced tool can be looked up: its guard and the call's tenant. */
export interface StopOrigin {
  readonly guard: Guard;
  readonly tenant: string | undefined;
}

const stopOrigins = new WeakMap<object, StopOrigin>();

/** The guard and tenant of the call a stop came from, when a {@link FencedTool} threw it. */
export function stopOriginOf(error: unknown): StopOrigin | undefined {
  return typeof error === 'object' && error !== null ? stopOrigins.get(error) : undefined;
}

/** The registered symbol every toolfence-guarded tool carries (shared by every package copy). */
export const FENCED_TOOL: unique symbol = Symbol.for('toolfence.fencedTool') as never;

/**
 * A LangChain tool guarded by toolfence: the tool's own type (same `invoke`, schema, name and
 * output types, so code that calls the tool compiles unchanged), plus the tool it wraps and its
 * checked policy. Build it with {@link fenceTool}; recognise one with {@link isFencedTool}.
 */
export type FencedTool<T extends StructuredToolInterface = StructuredToolInterface> = T & {
  /** The tool this one guards. */
  readonly wrappedTool: T;
  /** The policy, checked and filled in when the tool was wrapped. */
  readonly policy: ResolvedPolicy;
  readonly [FENCED_TOOL]: true;
};

/**
 * True for a tool already guarded by toolfence (from any copy of the package): its
 * `Symbol.for('toolfence.fencedTool')` marker. Wrapping one again (or naming it in
 * `toolfenceMiddleware` policies) passes it through: its own policy stays in force.
 */
export function isFencedTool(tool: unknown): tool is FencedTool {
  return typeof tool === 'object' && tool !== null && (tool as Record<symbol, unknown>)[FENCED_TOOL] === true;
}

/** The wrapped tool as the wrapper calls it. */
type InnerTool = StructuredToolInterface & {
  responseFormat?: string;
  verboseParsingErrors?: boolean;
  defaultConfig?: ToolRunnableConfig;
  metadata?: Record<string, unknown>;
  verbose?: boolean;
  tags?: string[];
  callbacks?: StructuredTool['callbacks'];
};

/** What the body returned to the guard in this call (so the first caller gets it untouched). */
interface OwnResult {
  readonly recorded: unknown;
  readonly output: unknown;
}

/**
 * The wrapper behind {@link FencedTool}. To an agent it is the wrapped tool: same `name`,
 * `description`, `schema`, `returnDirect`, `responseFormat`, `extras`, `metadata`, `tags`,
 * `verbose`, `verboseParsingErrors`; on a first run it returns exactly what the wrapped tool
 * returned.
 *
 * Each call: the arguments are parsed with the tool's schema (a bad call throws the same
 * `ToolInputParsingException` as the tool would, and claims nothing), then run through
 * `guard.run` keyed on the parsed arguments, with the tool call id as `callId`. A repeat gets
 * the recorded content (and artifact, for `content_and_artifact`) as a new `ToolMessage` for
 * the CURRENT tool call id.
 */
class FencedToolWrapper extends StructuredTool<any, any, any, any> {
  static override lc_name(): string {
    return 'FencedTool';
  }

  readonly [FENCED_TOOL] = true;
  name: string;
  description: string;
  schema: unknown;
  /** The tool this one guards. */
  readonly wrappedTool: StructuredToolInterface;
  /** The policy, checked and filled in when the tool was wrapped. */
  readonly policy: ResolvedPolicy;
  private readonly guard: Guard;
  private readonly rawPolicy: IdempotencyPolicy;
  private readonly onIndeterminate: StopMode;
  private readonly tenantOption: ConfigValue | undefined;
  private readonly runIdOption: ConfigValue | undefined;
  private readonly argumentSchema: ArgumentSchema;

  /** @throws PolicyError when the policy is invalid or names a key argument the schema lacks. */
  constructor(tool: StructuredToolInterface, options: FenceToolOptions) {
    const inner = tool as unknown as InnerTool;
    super({
      verbose: inner.verbose,
      callbacks: inner.callbacks,
      tags: inner.tags,
      metadata: inner.metadata,
      responseFormat: inner.responseFormat,
      verboseParsingErrors: inner.verboseParsingErrors,
      extras: inner.extras,
    });
    if (options?.guard === undefined) throw new TypeError('fenceTool needs a guard');
    this.name = tool.name;
    this.description = tool.description;
    this.schema = tool.schema;
    this.returnDirect = tool.returnDirect;
    this.responseFormat = inner.responseFormat ?? 'content';
    this.wrappedTool = tool;
    this.guard = options.guard;
    this.rawPolicy = withInterruptsAsNoEffect(options.policy);
    this.onIndeterminate = options.onIndeterminate ?? 'throw';
    if (this.onIndeterminate !== 'throw' && this.onIndeterminate !== 'report') {
      throw new TypeError(
        `onIndeterminate must be 'throw' or 'report', got ${String(options.onIndeterminate)}`,
      );
    }
    this.tenantOption = options.tenant;
    this.runIdOption = options.runId;
    this.argumentSchema = argumentSchemaOf(inner);
    const parameterNames = parameterNamesOf(this.argumentSchema);
    this.policy = this.guard.checkPolicy(
      this.rawPolicy,
      parameterNames === undefined ? { tool: tool.name } : { tool: tool.name, parameterNames },
    );
  }

  /**
   * Parse, guard and run (or replay) one call.
   *
   * @returns what the wrapped tool returns: a `ToolMessage` when invoked with a tool call (or a
   *   config carrying `toolCall`), else the tool's content.
   * @throws ToolInputParsingException the arguments do not match the schema (nothing claimed)
   * @throws KeyDerivationError no run id for a `'run'`-scoped key, or a key argument is missing
   * @throws IndeterminateOutcomeError | ExecutionAbandonedError unless `onIndeterminate: 'report'`
   * and every other error of `Guard.run` and of the wrapped tool.
   */
  override async invoke(input: any, config?: ToolRunnableConfig): Promise<any> {
    return await this.guardedInvoke(input, config);
  }

  /** @deprecated as in LangChain: use {@link FencedToolWrapper.invoke}. Routed through `invoke`. */
  override async call(arg: any, configArg?: any, tags?: string[]): Promise<any> {
    const config = parseCallbackConfigArg(configArg) as ToolRunnableConfig;
    const withTags = tags === undefined ? config : { ...config, tags: [...(config.tags ?? []), ...tags] };
    return await this.guardedInvoke(arg, withTags);
  }

  /** Never called: `invoke` and `call` delegate to the wrapped tool. */
  protected override async _call(): Promise<never> {
    throw new Error('FencedTool runs the wrapped tool through invoke()');
  }

  /**
   * `guard.approve` (or `deny`) the call `invoke(toolCall, config)` would claim (`recordApprovals`).
   * @throws ToolInputParsingException (nothing written), and the errors of `guard.approve`
   */
  async decideApproval(
    toolCall: ToolCall,
    config: ToolRunnableConfig | undefined,
    approved: boolean,
    audit: ApprovalOptions,
  ): Promise<DecideResult> {
    const { call } = await this.callOf(toolCall, config);
    const { signal: _signal, ...decided } = call;
    return approved ? this.guard.approve(decided, audit) : this.guard.deny(decided, audit);
  }

  /** The call the guard claims for `input` (parsed, keyed, scoped) and the config it runs with. */
  private async callOf(input: unknown, config: ToolRunnableConfig | undefined) {
    const toolCall = isToolCall(input) ? input : undefined;
    const effective = ensureConfig(
      mergeConfigs(
        this.wrappedTool instanceof StructuredTool ? this.wrappedTool.defaultConfig : undefined,
        config,
      ),
    ) as ToolRunnableConfig;
    // The id the wrapped tool's ToolMessage would carry (StructuredTool.call reads the same two).
    const callId = nonEmpty(toolCall?.id) ?? nonEmpty(effective.toolCall?.id);
    const parsed = await parseArguments(this.argumentSchema, toolCall === undefined ? input : toolCall.args);
    const runId = resolveRunId(this.runIdOption, effective);
    if (this.policy.scope === 'run' && this.policy.kind !== 'read_only' && runId === undefined) {
      throw missingRunIdError(this.name);
    }
    const tenant = resolveConfigValue(this.tenantOption, effective);
    const call: GuardedCall = {
      tool: this.name,
      arguments: keyArgumentsOf(parsed),
      callId,
      runId,
      tenant,
      policy: this.rawPolicy,
      signal: effective.signal,
    };
    return { call, callId, tenant };
  }

  private async guardedInvoke(input: unknown, config: ToolRunnableConfig | undefined): Promise<unknown> {
    const { call, callId, tenant } = await this.callOf(input, config);
    let own = undefined as OwnResult | undefined;
    try {
      const value = await this.guard.run(call, async (context) => {
        // The lease keeper and the timeout cancel the tool through this signal (it already
        // includes the caller's).
        const output = await this.wrappedTool.invoke(input as never, { ...config, signal: context.signal });
        const recorded = this.recordOf(output);
        own = { recorded, output };
        return recorded;
      });
      if (own !== undefined && value === own.recorded) return own.output;
      return this.replay(value, callId);
    } catch (error) {
      if (this.onIndeterminate === 'report' && isCallStopError(error)) {
        const content = stopReport(error);
        if (callId === undefined) return content;
        return new ToolMessage({ status: 'error', content, tool_call_id: callId, name: this.name });
      }
      if (!isCallStopError(error)) throw error;
      stopOrigins.set(error, { guard: this.guard, tenant });
      // A retry layer (langchain's toolRetryMiddleware) must not run a stopped call again.
      throw markNotRetryable(error);
    }
  }

  /**
   * What is stored: the tool's content, or `[content, artifact]` for `content_and_artifact` (the
   * shape the tool itself returns, so an operator can resolve a record with it).
   */
  private recordOf(output: unknown): unknown {
    const withArtifact = this.responseFormat === 'content_and_artifact';
    if (ToolMessage.isInstance(output)) {
      const recorded = withArtifact ? [output.content, output.artifact ?? null] : output.content;
      // A tool that answers with its own error message (status 'error') replays as one.
      return output.status === 'error' ? { [ERROR_STATUS_TAG]: true, recorded } : recorded;
    }
    return withArtifact ? [output, null] : output;
  }

  /** Rebuild the wrapped tool's answer from a recorded outcome, for the current call. */
  private replay(outcome: unknown, callId: string | undefined): unknown {
    const isError =
      typeof outcome === 'object' &&
      outcome !== null &&
      (outcome as Record<string, unknown>)[ERROR_STATUS_TAG] === true;
    const recorded = isError ? (outcome as { recorded: unknown }).recorded : outcome;
    let content: unknown = recorded;
    let artifact: unknown;
    if (this.responseFormat === 'content_and_artifact' && Array.isArray(recorded) && recorded.length === 2) {
      [content, artifact] = recorded;
    }
    if (callId === undefined) return content;
    const metadata = (this.wrappedTool as unknown as InnerTool).metadata;
    return new ToolMessage({
      status: isError ? 'error' : 'success',
      content: messageContent(content),
      artifact: artifact ?? undefined,
      tool_call_id: callId,
      name: this.name,
      ...(metadata === undefined ? {} : { metadata }),
    });
  }
}

/**
 * Guard a LangChain tool with toolfence. The result is a {@link FencedTool}, typed exactly as
 * `tool` is, that an agent (`createAgent`, LangGraph's `ToolNode`, `bindTools`) cannot tell from
 * `tool`. A tool that is already guarded is returned as it is.
 *
 * - Arguments are parsed with the tool's schema before the guard: a bad call throws
 *   `ToolInputParsingException` and claims nothing.
 * - The key is made from the parsed arguments (or per `policy.key`), the tenant and the run id
 *   (`configurable.thread_id` unless `runId` is given); the call id is the tool call's `id`.
 * - A repeat of a finished call gets the recorded result for the current tool call id; the
 *   tool's body is not entered.
 *
 * @example
 * ```ts
 * const createTicket = fenceTool(createTicketTool, {
 *   guard,
 *   policy: { kind: Idempotency.EFFECTFUL, keyArguments: ['title'] },
 * });
 * ```
 * @throws PolicyError at wrap time: an invalid policy, or `keyArguments` naming an argument
 *   that is not a parameter of the tool's schema.
 */
export function fenceTool<T extends StructuredToolInterface>(
  tool: T,
  options: FenceToolOptions<ToolArguments<T>>,
): FencedTool<T> {
  // Guarding twice would run the inner guard inside the outer one's body, whose re-entrancy
  // check reads as a possible effect: the tool keeps the policy it was first wrapped with.
  if (isFencedTool(tool)) return tool as FencedTool<T>;
  return new FencedToolWrapper(tool, options as unknown as FenceToolOptions) as unknown as FencedTool<T>;
}

/**
 * LangGraph's control flow (`interrupt()`, a `Command.PARENT` handoff) leaves a tool by throwing a
 * "bubble-up" error. It is not a failure: the tool has not finished and, on resume, LangGraph
 * runs it again from the top with the same call id. So its claim is released (never marked
 * indeterminate) and the error passes through unchanged. As LangGraph documents, code before an
 * `interrupt()` runs again on resume; keep effects after it.
 */
function withInterruptsAsNoEffect(policy: IdempotencyPolicy): IdempotencyPolicy {
  if (policy === null || typeof policy !== 'object') return policy;
  const isNoEffectError = policy.isNoEffectError;
  // An invalid one is left for checkPolicy to refuse.
  if (isNoEffectError !== undefined && typeof isNoEffectError !== 'function') return policy;
  return {
    ...policy,
    isNoEffectError: (error: unknown) => isGraphBubbleUp(error) || isNoEffectError?.(error) === true,
  };
}

function isToolCall(value: unknown): value is ToolCall {
  return typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'tool_call';
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
