import { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface, ToolRunnableConfig } from '@langchain/core/tools';
import {
  type ExecutionAbandonedError,
  type Guard,
  type IdempotencyPolicy,
  type IndeterminateOutcomeError,
  PolicyError,
  type PolicyMap,
  StepStoppedError,
  type StopMode,
  type StoppedToolCall,
} from '@toolfence/core';
// Types only: `langchain` is an optional peer, so this module must load without it (LangGraph
// users import fenceTool from the same entry point).
import type { AgentMiddleware, ToolCallHandler, ToolCallRequest, WrapModelCallHook } from 'langchain';
import { type FencedTool, fenceTool, isFencedTool, stopOriginOf } from './fence-tool.js';
import {
  type ConfigValue,
  isMissingRunIdError,
  missingRunIdError,
  resolveRunId,
} from './internal/call-scope.js';
import { isCallStopError, isGraphBubbleUp } from './internal/stop-errors.js';
import { markNotRetryable } from './retry-on.js';

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

/** One call of a step as it passes the middleware (see {@link StepStops}). */
interface StepEntry {
  /**
   * The tool as this call invokes it: a stop it throws is held back until every call of the
   * step in flight has settled, then thrown as the step's one error, marked non-retryable for
   * langchain's retry middleware. Thrown from inside the tool, so langchain passes it through
   * (it wraps only a middleware's own errors). `outcome` hears of each attempt's end.
   */
  watch(tool: { invoke: unknown }, outcome: CallOutcome): object;
  /** The call is done (idempotent). */
  leave(): void;
}

interface OpenStep {
  inFlight: number;
  readonly stops: StoppedToolCall[];
  readonly order: readonly string[];
  readonly settled: Promise<void>;
  readonly settle: () => void;
  error?: Error;
}

/**
 * The calls of one agent step run concurrently (a LangGraph task each). When one fails,
 * LangGraph aborts the others and keeps only the first error, so the caller would learn of one
 * stop only. The middleware holds a stopped call back until every call of its step in flight has
 * settled; then every stopped call throws the same error: the stop itself when it is the only
 * one, else a `StepStoppedError` listing them all in the model's call order.
 */
class StepStops {
  private readonly open = new Map<string, OpenStep>();

  enter(request: ToolCallRequest): StepEntry {
    const { id, order } = stepOf(request);
    let step = this.open.get(id);
    if (step === undefined) {
      let settle = () => {};
      const settled = new Promise<void>((resolve) => {
        settle = resolve;
      });
      step = { inFlight: 0, stops: [], order, settled, settle };
      this.open.set(id, step);
    }
    const entry = step;
    entry.inFlight += 1;
    let left = false;
    const leave = () => {
      if (left) return;
      left = true;
      entry.inFlight -= 1;
      if (entry.inFlight === 0) {
        if (this.open.get(id) === entry) this.open.delete(id);
        entry.settle();
      }
    };
    const callId = request.toolCall.id;
    const stopped = async (error: IndeterminateOutcomeError | ExecutionAbandonedError): Promise<Error> => {
      entry.stops.push({ key: error.key, tool: error.tool, callId, error });
      // Let the step's other calls, started in the same tick, reach the middleware first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      leave();
      await entry.settled;
      if (entry.error === undefined) {
        const rank = (call: StoppedToolCall) => entry.order.indexOf(call.callId ?? '');
        const stops = [...entry.stops].sort((a, b) => rank(a) - rank(b));
        entry.error = stops.length === 1 ? (stops[0] as StoppedToolCall).error : new StepStoppedError(stops);
      }
      return entry.error;
    };
    return {
      leave,
      watch: (tool, outcome) =>
        Object.create(tool, {
          invoke: {
            value: async (input: unknown, config: unknown) => {
              let result: unknown;
              try {
                result = await (tool.invoke as (input: unknown, config: unknown) => Promise<unknown>).call(
                  tool,
                  input,
                  config,
                );
              } catch (error) {
                if (!isCallStopError(error)) throw error;
                const stop = markNotRetryable(await stopped(markNotRetryable(error)));
                outcome.stopped(stop);
                throw stop;
              }
              outcome.settled();
              return result;
            },
          },
        }),
    };
  }
}

/** What a call's tool tells its middleware call about each attempt. */
interface CallOutcome {
  /** The attempt threw this stop (the step's error). */
  stopped(error: Error): void;
  /** The attempt returned: the call is no longer stopped. */
  settled(): void;
}

/** How many stopped calls {@link SwallowedStops} remembers (the oldest is forgotten first). */
const REMEMBERED_STOPS = 1000;

/**
 * The stops of this process's calls, by thread and tool call id, until the call settles. A
 * retry layer OUTSIDE the middleware (`[toolRetryMiddleware(), toolfenceMiddleware(...)]`) turns
 * the stop it receives into a ToolMessage and lets the run go on; the next model call would read
 * "failed" about a call that may have happened. So a model call whose messages hold the answer to
 * such a call is refused with the stop while the guard's record of it is unsettled.
 */
class SwallowedStops {
  private readonly stops = new Map<string, Error>();

  constructor(private readonly guard: Guard) {}

  record(thread: string, callId: string | undefined, error: Error): void {
    if (callId === undefined) return;
    const key = JSON.stringify([thread, callId]);
    this.stops.delete(key);
    this.stops.set(key, error);
    if (this.stops.size > REMEMBERED_STOPS) this.stops.delete(this.stops.keys().next().value as string);
  }

  forget(thread: string, callId: string | undefined): void {
    if (callId !== undefined) this.stops.delete(JSON.stringify([thread, callId]));
  }

  /** Throw the stop of a call answered in `messages` whose record is still unsettled. */
  async throwIfSwallowed(thread: string, messages: readonly unknown[]): Promise<void> {
    if (this.stops.size === 0) return;
    for (const message of messages) {
      if (!ToolMessage.isInstance(message)) continue;
      const key = JSON.stringify([thread, message.tool_call_id]);
      const stop = this.stops.get(key);
      if (stop === undefined) continue;
      if (await this.unsettled(stop)) throw stop;
      // An operator settled it (or released it): the conversation may go on.
      this.stops.delete(key);
    }
  }

  private async unsettled(error: Error): Promise<boolean> {
    const stop = error as Parameters<typeof StepStoppedError.callsOf>[0];
    for (const call of StepStoppedError.callsOf(stop)) {
      // The fenced tool that threw it knows its guard and tenant (its own, for a tool fenced
      // before it reached the middleware).
      const origin = stopOriginOf(call.error) ?? { guard: this.guard, tenant: undefined };
      try {
        const record = await origin.guard.inspect(
          call.key,
          origin.tenant === undefined ? {} : { tenant: origin.tenant },
        );
        if (record !== null && record.state !== 'completed') return true;
      } catch {
        // The store cannot say: stay stopped rather than let the model read "failed".
        return true;
      }
    }
    return false;
  }
}

/** The LangGraph thread of a call or model request (`configurable.thread_id`), or `''`. */
function threadOf(runtime: unknown): string {
  const threadId = (runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable
    ?.thread_id;
  return threadId === undefined || threadId === null ? '' : String(threadId);
}

/** The step a tool call belongs to: the AI message that made it (its call ids), in its thread. */
function stepOf(request: ToolCallRequest): { id: string; order: string[] } {
  const callId = request.toolCall.id;
  const messages = (request.state as { messages?: unknown } | undefined)?.messages;
  const thread = String(
    (request.runtime as { configurable?: Record<string, unknown> } | undefined)?.configurable?.thread_id ??
      '',
  );
  if (callId !== undefined && Array.isArray(messages)) {
    for (let index = messages.length - 1; index >= 0; index--) {
      const calls = (messages[index] as { tool_calls?: Array<{ id?: string }> } | undefined)?.tool_calls;
      if (Array.isArray(calls) && calls.some((call) => call.id === callId)) {
        const order = calls.map((call) => call.id ?? '');
        return { id: JSON.stringify([thread, index, order]), order };
      }
    }
  }
  return { id: JSON.stringify([thread, 'call', callId ?? Math.random()]), order: [] };
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
