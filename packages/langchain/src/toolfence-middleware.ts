import { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { type Guard, type IdempotencyPolicy, PolicyError } from '@toolfence/core';
// Types only: `langchain` is an optional peer, so this module must load without it (LangGraph
// users import fenceTool from the same entry point).
import type { AgentMiddleware, ToolCallHandler, ToolCallRequest, WrapModelCallHook } from 'langchain';
import { type FencedTool, fenceTool } from './fence-tool.js';
import { type ConfigValue, isMissingRunIdError } from './internal/call-scope.js';
import { isGraphBubbleUp, isStopError, type OnIndeterminate } from './internal/stop-errors.js';

/** Options of {@link toolfenceMiddleware}. */
export interface ToolfenceMiddlewareOptions {
  readonly guard: Guard;
  /** A policy per tool name. Tools without one run exactly as without the middleware. */
  readonly policies: Readonly<Record<string, IdempotencyPolicy>>;
  /**
   * `'throw'` (default): an `IndeterminateOutcomeError` or `ExecutionAbandonedError` rejects
   * `agent.invoke` (and ends `agent.stream`) with that very error; the run stops before the
   * model is called again. `'report'`: the model gets an error `ToolMessage` saying the action
   * may have happened and must not be retried, and the run goes on.
   */
  readonly onIndeterminate?: OnIndeterminate;
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
  const { guard, policies, onIndeterminate, tenant, runId } = options;
  if (guard === undefined) throw new TypeError('toolfenceMiddleware needs a guard');
  for (const [name, policy] of Object.entries(policies)) guard.checkPolicy(policy, { tool: name });

  const policyOf = (name: string): IdempotencyPolicy | undefined =>
    Object.hasOwn(policies, name) ? policies[name] : undefined;
  const fenced = new WeakMap<object, FencedTool>();
  const fencedOf = (tool: StructuredToolInterface, policy: IdempotencyPolicy): FencedTool => {
    let wrapper = fenced.get(tool);
    if (wrapper === undefined) {
      wrapper = fenceTool(tool, { guard, policy, onIndeterminate, tenant, runId });
      fenced.set(tool, wrapper);
    }
    return wrapper;
  };

  let policyNamesChecked = options.allowUnknownPolicies === true;
  const wrapModelCall: WrapModelCallHook = async (request, handler) => {
    const names = new Set<string>();
    for (const tool of request.tools) {
      const name = (tool as { name?: unknown }).name;
      if (typeof name === 'string') names.add(name);
      const policy = isInvocableTool(tool) ? policyOf(tool.name) : undefined;
      if (policy !== undefined) fencedOf(tool as StructuredToolInterface, policy);
    }
    if (!policyNamesChecked) {
      policyNamesChecked = true;
      const unknown = Object.keys(policies).filter((name) => !names.has(name));
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

  const wrapToolCall = async (request: ToolCallRequest, handler: ToolCallHandler) => {
    const { toolCall, tool } = request;
    const policy = policyOf(toolCall.name);
    const guarded =
      policy !== undefined && isInvocableTool(tool)
        ? { ...request, tool: fencedOf(tool as StructuredToolInterface, policy) }
        : request;
    try {
      return await handler(guarded);
    } catch (error) {
      if (rejectsRun(error, request)) throw error;
      // What createAgent's ToolNode does with a tool error when no wrapToolCall is present.
      return new ToolMessage({
        content: `${error}\n Please fix your mistakes.`,
        tool_call_id: toolCall.id ?? '',
        name: toolCall.name,
        status: 'error',
      });
    }
  };

  const middleware = {
    [MIDDLEWARE_BRAND]: true,
    name: options.name ?? 'toolfence',
    wrapModelCall,
    wrapToolCall,
  };
  return middleware as unknown as AgentMiddleware;
}

/** Errors that must keep rejecting (or be handled by langchain itself), not reach the model. */
function rejectsRun(error: unknown, request: ToolCallRequest): boolean {
  if (isStopError(error)) return true;
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
