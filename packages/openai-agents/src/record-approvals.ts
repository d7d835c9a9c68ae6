// recordApprovals: the decisions a server made on a RunState's interruptions (`state.approve` /
// `state.reject`), recorded in the guard's store once, so the fenced tool's claim consumes each
// approval (an approved call runs once whatever number of resumes arrive) and a rejection stays
// a denial across resumes, serialisations and edited states.
import type { RunContext, RunState } from '@openai/agents-core';
import type { DecideResult } from '@toolfence/core';
import { approvalDeciderOf } from './internal/approval-deciders.js';

/** Options of {@link recordApprovals}. */
export interface RecordApprovalsOptions {
  /** The operator who decided (the authenticated user id), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
}

/** One decision {@link recordApprovals} recorded, with the store's answer. */
export interface RecordedApproval {
  /** The tool the decision is on (an `edit` may name another tool than the model's call). */
  readonly toolName: string;
  /** The SDK's tool call id of the call (the `callId` the guard keys and records it with). */
  readonly callId: string;
  /** The decision the state holds: `state.approve` (true) or `state.reject` (false). */
  readonly approved: boolean;
  /**
   * The store's answer (`guard.approve` / `guard.deny`): `decided` (recorded, or already so),
   * `denied` (an approval found a denial: it stands, the resumed call throws
   * `ApprovalDeniedError`), `consumed` (the call was claimed already: a resume replays its
   * outcome), `conflict` (the key holds another tool or other arguments).
   */
  readonly status: DecideResult['status'];
}

interface FunctionCallLike {
  readonly type: string;
  readonly name?: string;
  readonly callId?: string;
  readonly arguments?: string;
}

/**
 * Record the decisions `state` holds on its interruptions in the guard's store, for the fenced
 * tools whose policy has `approval: 'required'`: `state.approve(item)` with `guard.approve`,
 * `state.reject(item)` with `guard.deny`, each with the call the fenced `invoke` will claim (tool,
 * parsed arguments, call id, tenant and run id from the state's context). Call it on the server,
 * right after it approved or rejected the items in the authenticated request that carries the
 * decision, and before the state is serialised or resumed; the SDK's own flow is unchanged.
 * Interruptions not decided yet, of tools without such a policy, or whose input does not parse
 * are skipped.
 *
 * What it buys: an approved call runs ONCE however many times, or in however many processes, the
 * state is resumed (the claim consumes the approval; later resumes replay the outcome); a state
 * whose call arguments were edited after the decision finds no approval for them (the call stops
 * with `ApprovalRequiredError`); and a rejection is recorded, so a resumed copy of the state that
 * says "approved" instead makes the call throw `ApprovalDeniedError`.
 *
 * @returns one entry per decision recorded, in interruption order.
 * @throws KeyDerivationError the call's key cannot be derived (its run id resolver answered `undefined`)
 * @throws StoreConfigurationError the guard's store keeps no approvals
 * @throws StoreInputError `by` or `reason` outside the store limits (nothing written)
 * @throws StoreUnavailableError
 */
export async function recordApprovals(
  state: RunState<any, any>,
  options: RecordApprovalsOptions = {},
): Promise<readonly RecordedApproval[]> {
  if (state === null || typeof state !== 'object' || typeof state.getInterruptions !== 'function') {
    throw new TypeError('recordApprovals needs a RunState (result.state)');
  }
  const runContext = (state as unknown as { _context: RunContext<any> })._context;
  const audit = {
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  };
  const recorded: RecordedApproval[] = [];
  for (const item of state.getInterruptions()) {
    const raw = item.rawItem as FunctionCallLike;
    if (raw.type !== 'function_call' || typeof raw.callId !== 'string') continue;
    const toolName = item.toolName ?? raw.name;
    if (typeof toolName !== 'string') continue;
    const approved = runContext.isToolApproved({ toolName, callId: raw.callId });
    if (approved === undefined) continue;
    const tool = item.agent.tools.find(
      (candidate) => candidate.type === 'function' && candidate.name === toolName,
    );
    const decide = tool === undefined ? undefined : approvalDeciderOf(tool);
    if (decide === undefined) continue;
    const details = { toolCall: raw } as Parameters<typeof decide>[2];
    const result = await decide(runContext, raw.arguments ?? '', details, approved, audit);
    if (result === undefined) continue;
    recorded.push({ toolName, callId: raw.callId, approved, status: result.status });
  }
  return recorded;
}
