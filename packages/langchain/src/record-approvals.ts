// recordApprovals: the decisions a server is about to resume a humanInTheLoopMiddleware interrupt
// with, recorded in the guard's store once against the calls of the thread's checkpoint, so the
// fenced tool's claim consumes each approval (an approved call runs once whatever number of
// resumes arrive) and a rejection stays a denial across resumes.
import type { ToolCall } from '@langchain/core/messages';
import type { StructuredToolInterface, ToolRunnableConfig } from '@langchain/core/tools';
import type { ApprovalOptions, DecideResult } from '@toolfence/core';
import { isFencedTool } from './fence-tool.js';
import { middlewareToolsOf } from './internal/middleware-tools.js';

/** The part of a `createAgent` agent {@link recordApprovals} reads. */
export interface ApprovalAgent {
  /** The agent's `createAgent` options: its tools and middleware, where the fenced tools are found. */
  readonly options: { readonly tools?: readonly unknown[]; readonly middleware?: readonly unknown[] };
  /** The compiled graph: the thread's checkpoint (the pending interrupt and its calls) is read from it. */
  readonly graph: { getState(config: ToolRunnableConfig): Promise<unknown> };
}

/** One decision of langchain's `HITLResponse` (`{ decisions: [...] }`). */
export type ApprovalDecisionInput =
  | { readonly type: 'approve' }
  | {
      readonly type: 'edit';
      readonly editedAction: { readonly name: string; readonly args: Record<string, unknown> };
    }
  | { readonly type: 'reject'; readonly message?: string };

/** Options of {@link recordApprovals}. */
export interface RecordApprovalsOptions {
  /** The operator who decided (the authenticated user id), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, at most `MAX_REASON_LENGTH` code units; a reject decision's `message` is not recorded. */
  readonly reason?: string;
}

/** One decision {@link recordApprovals} recorded, with the store's answer. */
export interface RecordedApproval {
  /** The tool the decision is on (an `edit` may name another tool than the model's call). */
  readonly toolName: string;
  /** The SDK's tool call id of the call (the `callId` the guard keys and records it with). */
  readonly toolCallId: string | undefined;
  /** `approve` and `edit` (the edited call) record an approval, `reject` a denial. */
  readonly approved: boolean;
  /**
   * The store's answer: `decided`; `denied` (a denial stands: the resumed call throws
   * `ApprovalDeniedError`); `consumed` (the call was claimed already: the resume replays it);
   * `conflict` (the key holds another tool or other arguments).
   */
  readonly status: DecideResult['status'];
}

interface PendingState {
  readonly values?: { readonly messages?: readonly unknown[] };
  readonly tasks?: ReadonlyArray<{ readonly interrupts?: ReadonlyArray<{ readonly value?: unknown }> }>;
}

type Decider = (
  call: ToolCall,
  config: ToolRunnableConfig,
  approved: boolean,
  audit: ApprovalOptions,
) => Promise<DecideResult>;

/**
 * Record `resume.decisions` (the `HITLResponse` the server is about to resume with:
 * `agent.invoke(new Command({ resume }), config)`) in the guard's store, for the tools whose
 * policy has `approval: 'required'` (a `fenceTool` tool of the agent, or a tool the agent's
 * `toolfenceMiddleware` guards): `approve` with `guard.approve`, `edit` with `guard.approve` of
 * the edited call, `reject` with `guard.deny`. The calls are read from the thread's checkpoint
 * (`agent.graph.getState(config)`: the last AI message's tool calls the interrupt's
 * `actionRequests` name), never from the request. As humanInTheLoopMiddleware, when any decision
 * is a rejection only the rejections are recorded (the approved calls do not run on that resume).
 * Call it on the server, in the authenticated request that carries the decision.
 *
 * @returns one entry per decision recorded, in the order of the interrupt's action requests.
 * @throws TypeError the thread has no humanInTheLoopMiddleware interrupt, or the decisions do not match it
 * @throws ToolInputParsingException a call's arguments do not match its schema (nothing written)
 * @throws KeyDerivationError | StoreConfigurationError | StoreInputError | StoreUnavailableError (guard.approve's)
 */
export async function recordApprovals(
  agent: ApprovalAgent,
  config: ToolRunnableConfig,
  resume: { readonly decisions: readonly ApprovalDecisionInput[] },
  options: RecordApprovalsOptions = {},
): Promise<readonly RecordedApproval[]> {
  const decisions = resume?.decisions;
  if (!Array.isArray(decisions)) throw new TypeError('recordApprovals needs resume.decisions');
  const state = (await agent.graph.getState(config)) as PendingState;
  const calls = interruptedCalls(state);
  if (calls.length !== decisions.length) {
    throw new TypeError(
      `recordApprovals: ${decisions.length} decision(s) for ${calls.length} interrupted tool call(s) in this thread`,
    );
  }
  const audit = {
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  };
  const anyRejected = decisions.some((decision) => decision.type === 'reject');
  const recorded: RecordedApproval[] = [];
  for (const [index, decision] of decisions.entries()) {
    if (anyRejected && decision.type !== 'reject') continue;
    const original = calls[index] as ToolCall;
    const call: ToolCall =
      decision.type === 'edit'
        ? {
            type: 'tool_call',
            name: decision.editedAction.name,
            args: decision.editedAction.args,
            id: original.id,
          }
        : original;
    const decide = deciderOf(agent, call.name);
    if (decide === undefined) continue;
    const approved = decision.type !== 'reject';
    const result = await decide(call, config, approved, audit);
    recorded.push({ toolName: call.name, toolCallId: call.id, approved, status: result.status });
  }
  return recorded;
}

/** The tool calls of the last AI message that the pending interrupt asks about, in its order. */
function interruptedCalls(state: PendingState): ToolCall[] {
  const value = state.tasks
    ?.flatMap((task) => task.interrupts ?? [])
    .map((pending) => pending.value as { actionRequests?: unknown } | undefined)
    .find((candidate) => Array.isArray(candidate?.actionRequests));
  if (value === undefined)
    throw new TypeError('recordApprovals: the thread has no humanInTheLoopMiddleware interrupt');
  const requests = value.actionRequests as ReadonlyArray<{ name?: unknown; args?: unknown }>;
  const messages = state.values?.messages ?? [];
  const last = [...messages]
    .reverse()
    .find((message) => Array.isArray((message as { tool_calls?: unknown }).tool_calls)) as
    | { tool_calls: ToolCall[] }
    | undefined;
  const toolCalls = last?.tool_calls ?? [];
  const calls: ToolCall[] = [];
  let from = 0;
  for (const request of requests) {
    // The middleware lists the calls it interrupts in their order: match name and arguments.
    const at = toolCalls.findIndex(
      (call, index) =>
        index >= from &&
        call.name === request.name &&
        JSON.stringify(call.args) === JSON.stringify(request.args),
    );
    if (at < 0)
      throw new TypeError(
        `recordApprovals: no tool call of the checkpoint matches "${String(request.name)}"`,
      );
    calls.push({ ...toolCalls[at], type: 'tool_call' } as ToolCall);
    from = at + 1;
  }
  return calls;
}

function deciderOf(agent: ApprovalAgent, name: string): Decider | undefined {
  const tool = (agent.options.tools ?? []).find(
    (candidate) => (candidate as { name?: unknown } | null)?.name === name,
  ) as StructuredToolInterface | undefined;
  if (tool === undefined) return undefined;
  let fenced: unknown;
  if (isFencedTool(tool)) fenced = tool;
  else {
    for (const middleware of agent.options.middleware ?? []) {
      const tools = middlewareToolsOf(middleware);
      const policy = tools?.policyOf(name);
      if (tools !== undefined && policy !== undefined) {
        fenced = tools.fencedOf(tool, policy);
        break;
      }
    }
  }
  const wrapper = fenced as { policy?: { approval?: unknown }; decideApproval?: Decider } | undefined;
  if (wrapper?.policy?.approval !== 'required' || typeof wrapper.decideApproval !== 'function')
    return undefined;
  return wrapper.decideApproval.bind(wrapper);
}
