// What the guard says when a call needs an approval: the stops (approval required, denied), the
// audit an event carries, the store check before a claim that needs one, and rule G1's answer
// when a call that ran finds its key asking for an approval again.
import { ApprovalDeniedError } from '../errors/approval-denied-error.js';
import { ApprovalRequiredError } from '../errors/approval-required-error.js';
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import type { ApprovalEntry } from '../store/idempotency-store.js';
import { untraced } from '../telemetry/traced-store.js';
import { indeterminateOutcomeError, recordLost } from './call-errors.js';
import type { CallState } from './call-state.js';
import type { GuardEvent } from './guard-events.js';
import type { GuardRuntime } from './guard-runtime.js';
import type { CallProgress } from './guard-types.js';
import { describeError } from './recorded-error.js';

function callOf(state: CallState): { key: string; tool: string; callId?: string } {
  const { key } = state.ref;
  const { tool, callId } = state.call;
  return callId === undefined ? { key, tool } : { key, tool, callId };
}

export function approvalRequiredError(state: CallState): ApprovalRequiredError {
  return new ApprovalRequiredError(callOf(state));
}

export function approvalDeniedError(state: CallState): ApprovalDeniedError {
  return new ApprovalDeniedError(callOf(state));
}

/** The decision as an event carries it (never the arguments). */
export function approvalOf(entry: ApprovalEntry): NonNullable<GuardEvent['approval']> {
  return {
    approved: entry.approved,
    ...(entry.by === undefined ? {} : { by: entry.by }),
    ...(entry.reason === undefined ? {} : { reason: entry.reason }),
  };
}

/**
 * A store without `decideApproval` keeps no approvals: its claim would ignore the requirement and
 * run the call unapproved, so the guard refuses before claiming (fail closed).
 * @throws StoreConfigurationError
 */
export function requireApprovals(runtime: GuardRuntime): void {
  if (typeof runtime.store.decideApproval === 'function') return;
  throw new StoreConfigurationError(
    untraced(runtime.store).constructor?.name || 'the store',
    'it keeps no approvals (no decideApproval), and this policy needs one (approval: required)',
  );
}

/**
 * Rule G1 for a call that entered its body, lost its record, and finds the key's new life asking
 * for an approval (or denied): an EFFECTFUL call's outcome is unknown; an IDEMPOTENT one may run
 * again only on a new approval.
 */
export function lostAfterApproval(runtime: GuardRuntime, state: CallState, progress: CallProgress): Error {
  const attempt = progress.lastAttempt ?? { attempt: 0, fence: 0 };
  if (state.policy.kind === Idempotency.EFFECTFUL) {
    const reason = describeError(recordLost());
    runtime.emit('tool.indeterminate', state, attempt, { error: reason });
    return indeterminateOutcomeError(state, attempt, reason);
  }
  runtime.emit('tool.approval_required', state, attempt);
  return approvalRequiredError(state);
}
