import { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface, ToolRunnableConfig } from '@langchain/core/tools';
import {
  type Guard,
  type IdempotencyPolicy,
  PolicyError,
  type PolicyMap,
  StepStoppedError,
  type StopMode,
} from '@toolfence/core';
// Types only: `langchain` is an optional peer, so this module must load without it (LangGraph
// users import fenceTool from the same entry point).
import type { AgentMiddleware, ToolCallHandler, ToolCallRequest, WrapModelCallHook } from 'langchain';
import { type FencedTool, fenceTool, isFencedTool } from './fence-tool.js';
import {
  type ConfigValue,
  isMissingRunIdError,
  missingRunIdError,
  resolveRunId,
} from './internal/call-scope.js';
import { registerMiddlewareTools } from './internal/middleware-tools.js';
import { type CallOutcome, StepStops } from './internal/step-stops.js';
import { isCallStopError, isGraphBubbleUp } from './internal/stop-errors.js';
import { SwallowedStops } from './internal/swallowed-stops.js';

/** Options of {@link toolfenceMiddleware}. */
export interface ToolfenceMiddlewareOptions {
  readonly guard: Guard;
  /**
   * A policy per tool name (own properties only). Tools without one run exactly as without the
   * middleware; a tool already guarded with `fenceTool` keeps its own policy.
   */
  readonly policies: PolicyMap;
  /**
   * `'throw'` (default): an `IndeterminateOutcomeError` or `ExecutionAbandonedError` rejects
   * `agent.invoke` (and ends `agent.stream`) with that very error; the run stops before the
   * model is called again. `'report'`: the model gets an error `ToolMessage` saying the action
   * may have happened and must not be retried, and the run goes on.
   */
  readonly onIndeterminate?: StopMode;
  /** Tenant of each call: a string or a resolver of the call's config. Default: the guard's. */
  readonly tenant?: ConfigValue;
  /** Run id of each call: a string or a resolver. Default: `configurable.thread_id`. */
  readonly runId?: ConfigValue;
  /** Middleware name (unique within an agent). Default `'toolfence'`. */
  readonly name?: string;
  /**
   * By default a policy that names no tool of the first model call is a `PolicyError` (a
   * misspelt name would leave the real tool unguarded). Set this when the agent's tool set
   * changes between model calls (a tool-selection middleware before this one), so a policy may
   * name a tool the first call does not see.
   */
  readonly allowUnknownPolicies?: boolean;
}

/** `createMiddleware`'s brand (`MIDDLEWARE_BRAND` in langchain), a registered symbol. */
const MIDDLEWARE_BRAND = Symbol.for('AgentMiddleware');

/**
 * A langchain v1 `createAgent` middleware that guards the agent's tools from one policy table,
 * without touching the tools: `createAgent({ model, tools, middleware: [toolfenceMiddleware({
 * guard, policies })] })`.
 *
 * Behaviour, compared with the same agent without it:
 * - a tool with a policy runs through {@link fenceTool} (parse, key, claim, run or replay);
 * - an ordinary tool error still becomes an error `ToolMessage` the model sees
 *   (`"<error>\n Please fix your mistakes."`, status `'error'`), and the run goes on, exactly as
 *   `createAgent` does without any `wrapToolCall` middleware (with one, langchain would reject
 *   `agent.invoke` instead). A bad tool input keeps langchain's own message;
 * - `IndeterminateOutcomeError` and `ExecutionAbandonedError` reject `agent.invoke` with the
 *   typed error (see `onIndeterminate`). With a checkpointer the thread stays at the tool step;
 *   after an operator settles the record (`guard.resolve`), `agent.invoke(null, config)`
 *   resumes and the call gets the settled outcome without running the tool;
 * - configuration errors reject too: `PolicyError`, and `KeyDerivationError` for a missing run
 *   id (pass `configurable.thread_id`); interrupts (`interrupt()`) pass through untouched;
 * - errors thrown by other middleware keep their own behaviour.
 *
 * Policies are checked when the middleware is made; their names against the agent's tools, and
 * their key arguments against each tool's schema, when the model is first called (before any
 * tool runs). Such
 * a `PolicyError` reaches the caller wrapped by langchain in a `MiddlewareError` (same name and
 * message; the `PolicyError` is its `cause`).
 *
 * Put it before (outside) middleware that retries tool calls, so a retry goes through the guard.
 *
 * @throws PolicyError when a policy is invalid.
 */
export function toolfenceMiddleware(options: ToolfenceMiddlewareOptions): AgentMiddleware {
  const { guard } = options;
  if (guard === undefined) throw new TypeError('toolfenceMiddleware needs a guard');
  const policies = options.policies as Policies;
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('toolfenceMiddleware needs a policies object (tool name -> policy)');
  }
  const runScoped: string[] = [];
  for (const [name, policy] of Object.entries(policies)) {
    if (policy === undefined) continue;
    const resolved = guard.checkPolicy(policy, { tool: name });
    // A READ_ONLY call keeps no record: it needs no key, so no run id.
    if (resolved.scope === 'run' && resolved.kind !== 'read_only') runScoped.push(name);
  }
  const tools = fencedTools(options, policies);
  const stops = new SwallowedStops(guard);
  const middleware = {
    [MIDDLEWARE_BRAND]: true,
    name: options.name ?? 'toolfence',
    beforeAgent: beforeAgentHook(runScoped, options.runId),
    wrapModelCall: wrapModelCallHook(tools, options.allowUnknownPolicies === true, stops),
    wrapToolCall: wrapToolCallHook(tools, stops),
  };
  // recordApprovals decides on a call with the very wrapper this middleware claims it with.
  registerMiddlewareTools(middleware, tools);
  return middleware as unknown as AgentMiddleware;
}

type Policies = Readonly<Record<string, IdempotencyPolicy | undefined>>;

/** The policies by tool name, and each policied tool fenced once (the same wrapper every time). */
interface FencedTools {
  readonly policies: Policies;
  policyOf(name: string): IdempotencyPolicy | undefined;
  fencedOf(tool: StructuredToolInterface, policy: IdempotencyPolicy): FencedTool;
}

function fencedTools(options: ToolfenceMiddlewareOptions, policies: Policies): FencedTools {
  const { guard, onIndeterminate, tenant, runId } = options;
  const fenced = new WeakMap<object, FencedTool>();
  return {
    policies,
    policyOf: (name) => (Object.hasOwn(policies, name) ? policies[name] : undefined),
    fencedOf: (tool, policy) => {
      let wrapper = fenced.get(tool);
      if (wrapper === undefined) {
        wrapper = fenceTool(tool, { guard, policy, onIndeterminate, tenant, runId }) as FencedTool;
        fenced.set(tool, wrapper);
      }
      return wrapper;
    },
  };
}

function beforeAgentHook(runScoped: readonly string[], runId: ToolfenceMiddlewareOptions['runId']) {
  // A missing run id is a set-up fault: caught once, before the first model call, whatever the
  // number of calls that would each fail (in parallel they reject as LangGraph's AggregateError).
  return (_state: unknown, runtime: { configurable?: Record<string, unknown> }) => {
    if (runScoped.length === 0) return undefined;
    // A resolver may read what only a tool call's config has: then it is judged per call.
    if (typeof runId === 'function') return undefined;
    const config = { configurable: runtime?.configurable ?? {} } as ToolRunnableConfig;
    if (resolveRunId(runId, config) === undefined) throw missingRunIdError(runScoped.join('", "'));
    return undefined;
  };
}

/** Fences the policied tools of each model call; the first one checks every policy names a tool. */
function wrapModelCallHook(
  tools: FencedTools,
  allowUnknownPolicies: boolean,
  stops: SwallowedStops,
): WrapModelCallHook {
  const { policies, policyOf, fencedOf } = tools;
  let policyNamesChecked = allowUnknownPolicies;
  return async (request, handler) => {
    // A retry layer outside this middleware may have turned a stop into a ToolMessage: the
    // model must not read it while the call is unsettled ("failed" when it may have happened).
    await stops.throwIfSwallowed(threadOf(request.runtime), request.messages);
    const names = new Set<string>();
    for (const tool of request.tools) {
      const name = (tool as { name?: unknown }).name;
      if (typeof name === 'string') names.add(name);
      const policy = isInvocableTool(tool) && !isFencedTool(tool) ? policyOf(tool.name) : undefined;
      if (policy !== undefined) fencedOf(tool as StructuredToolInterface, policy);
    }
    if (!policyNamesChecked) {
      policyNamesChecked = true;
      const unknown = Object.keys(policies).filter(
        (name) => !names.has(name) && policyOf(name) !== undefined,
      );
      if (unknown.length > 0) {
        throw new PolicyError(
          'policies',
          `name ${unknown.map((name) => `"${name}"`).join(', ')}, which the agent does not have ` +
            `(tools: ${[...names].join(', ') || 'none'}); a misspelt name would leave a tool unguarded. ` +
            'If the tool set changes between model calls, pass allowUnknownPolicies: true.',
        );
      }
    }
    return handler(request);
  };
}

/** Runs each tool call through its fenced tool; a tool error becomes the ToolMessage the agent expects. */
function wrapToolCallHook(tools: FencedTools, stops: SwallowedStops) {
  const { policyOf, fencedOf } = tools;
  const steps = new StepStops();
  return async (request: ToolCallRequest, handler: ToolCallHandler) => {
    const { toolCall, tool } = request;
    const thread = threadOf(request.runtime);
    // The stop the tool threw in this call, unless a later attempt of it settled.
    let stoppedWith: Error | undefined;
    const outcome: CallOutcome = {
      stopped: (error) => {
        stoppedWith = error;
        stops.record(thread, toolCall.id, error);
      },
      settled: () => {
        stoppedWith = undefined;
        stops.forget(thread, toolCall.id);
      },
    };
    const policy = policyOf(toolCall.name);
    // A tool guarded already (fenceTool) keeps its own guard: guarding it twice would run the
    // inner guard inside the outer one's body, and its re-entrancy check reads as an effect.
    const guardedTool =
      policy !== undefined && isInvocableTool(tool) && !isFencedTool(tool)
        ? fencedOf(tool as StructuredToolInterface, policy)
        : tool;
    const step = steps.enter(request);
    const guarded = isInvocableTool(guardedTool)
      ? { ...request, tool: step.watch(guardedTool, outcome) as ToolCallRequest['tool'] }
      : request;
    try {
      const result = await handler(guarded);
      // A layer inside this middleware (langchain's toolRetryMiddleware: "failed after N
      // attempts") answered the stop with a ToolMessage: the run must end all the same.
      if (stoppedWith !== undefined) throw stoppedWith;
      return result;
    } catch (error) {
      if (rejectsRun(error, request)) throw error;
      // What createAgent's ToolNode does with a tool error when no wrapToolCall is present.
      return new ToolMessage({
        content: `${error}\n Please fix your mistakes.`,
        tool_call_id: toolCall.id ?? '',
        name: toolCall.name,
        status: 'error',
      });
    } finally {
      step.leave();
    }
  };
}

/** The LangGraph thread of a call or model request (`configurable.thread_id`), or `''`. */
function threadOf(runtime: unknown): string {
  const threadId = (runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable
    ?.thread_id;
  return threadId === undefined || threadId === null ? '' : String(threadId);
}

/** Errors that must keep rejecting (or be handled by langchain itself), not reach the model. */
function rejectsRun(error: unknown, request: ToolCallRequest): boolean {
  if (isCallStopError(error) || StepStoppedError.isInstance(error)) return true;
  if (PolicyError.isInstance(error) || isMissingRunIdError(error)) return true;
  if (typeof error !== 'object' || error === null) return false;
  // interrupt() and other LangGraph control flow.
  if (isGraphBubbleUp(error)) return true;
  // A bad tool input: createAgent's ToolNode formats it itself, as without middleware.
  // Another middleware's own error: it decides. (langchain brands both, like MiddlewareError.)
  const brand = (error as { '~brand'?: unknown })['~brand'];
  if (brand === 'ToolInvocationError' || brand === 'MiddlewareError') return true;
  return request.runtime?.signal?.aborted === true;
}

function isInvocableTool(tool: unknown): tool is { name: string; invoke: unknown } {
  return (
    typeof tool === 'object' &&
    tool !== null &&
    typeof (tool as { name?: unknown }).name === 'string' &&
    typeof (tool as { invoke?: unknown }).invoke === 'function'
  );
}
