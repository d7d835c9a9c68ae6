/**
 * What every store decides alike about approvals (docs/store-contract.md in this package,
 * "Approvals"): the input of `decideApproval`, what a claim does with a record in an approval state, and
 * what a decision does with the record under the key. Pure functions of the record as the atomic
 * step reads it, for stores that decide in their own code (MemoryStore, SQLite); a remote store
 * evaluates the same conditions in its script or statement.
 */
import { StoreInputError } from '../errors/store-input-error.js';
import { MAX_ID_LENGTH } from '../key/key-limits.js';
import type { ApprovalDecision, ApprovalState } from './approval-records.js';
import type { ClaimOptions, IdempotencyRecord, RecordState } from './idempotency-store.js';
import { checkResolutionAudit, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, nameProblem } from './store-input.js';

/** True for `awaiting_approval`, `approved` and `denied`: a life before its claim. */
export function isApprovalState(state: RecordState): state is ApprovalState {
  return state === 'awaiting_approval' || state === 'approved' || state === 'denied';
}

function checkField(field: string, value: unknown, maxLength: number): void {
  const problem = nameProblem(value, maxLength);
  if (problem !== undefined) throw new StoreInputError(field, problem);
}

/**
 * A decision: `approved` a boolean, `tool` and `fingerprint` names, `by` a name, `reason` at most
 * `MAX_REASON_LENGTH`, `expect.owner` a name, and the operator fields as a claim's.
 * @throws StoreInputError
 */
export function checkApprovalDecision(decision: ApprovalDecision): void {
  if (decision === null || typeof decision !== 'object') {
    throw new StoreInputError('decision', 'must be an object');
  }
  if (typeof decision.approved !== 'boolean') throw new StoreInputError('approved', 'must be a boolean');
  checkField('tool', decision.tool, MAX_NAME_LENGTH);
  checkField('fingerprint', decision.fingerprint, MAX_NAME_LENGTH);
  checkResolutionAudit(decision);
  const expect = (decision as { expect?: unknown }).expect;
  if (expect !== undefined) {
    if (expect === null || typeof expect !== 'object')
      throw new StoreInputError('expect', 'must be an object');
    checkField('expect owner', (expect as { owner?: unknown }).owner, MAX_NAME_LENGTH);
  }
  if (decision.runId !== undefined) checkField('runId', decision.runId, MAX_ID_LENGTH);
  if (decision.callId !== undefined) checkField('callId', decision.callId, MAX_ID_LENGTH);
  if (decision.description !== undefined) {
    checkField('description', decision.description, MAX_DESCRIPTION_LENGTH);
  }
  if (decision.codec !== undefined) checkField('codec', decision.codec, MAX_NAME_LENGTH);
}

/**
 * Whether a claim conflicts with the live record: another tool, or another fingerprint when the
 * claim checks fingerprints, needs an approval, or finds a record in an approval state (an
 * approval binds the arguments, whatever `checkFingerprint` says).
 */
export function claimConflicts(
  record: Pick<IdempotencyRecord, 'state' | 'tool' | 'fingerprint'>,
  options: Pick<ClaimOptions, 'tool' | 'fingerprint' | 'checkFingerprint' | 'approval'>,
): boolean {
  if (record.tool !== options.tool) return true;
  const bindsArguments =
    options.checkFingerprint || options.approval === 'required' || isApprovalState(record.state);
  return bindsArguments && record.fingerprint !== options.fingerprint;
}

/**
 * What a claim does with a live record in an approval state (after {@link claimConflicts} said
 * no): answer `approval_required` (nothing written), answer `denied`, or `consume` the approval
 * (the record becomes `in_progress` at fence 1, attempt 1, this claim's owner, lease and
 * retention, its `approval` kept). Undefined for a claimed state: the claim rules apply as before.
 */
export function approvalClaimDecision(
  record: Pick<IdempotencyRecord, 'state' | 'tool' | 'fingerprint'>,
): 'approval_required' | 'denied' | 'consume' | undefined {
  switch (record.state) {
    case 'awaiting_approval':
      return 'approval_required';
    case 'denied':
      return 'denied';
    case 'approved':
      return 'consume';
    default:
      return undefined;
  }
}

/**
 * What `decideApproval` does with the record under the key (`undefined`: none is live), in this order:
 * - `create`: no record, no `expect` → create it in the decided state;
 * - `not_found`: no record, `expect` given;
 * - `conflict`: another tool or fingerprint;
 * - `consumed`: a claimed state (the approval was used, or none was needed);
 * - `changed`: `expect.owner` is not the record's owner;
 * - `write`: set the decided state and audit (`awaiting_approval`, or `approved` being denied);
 * - `unchanged`: the same decision is already recorded (answer `decided`, write nothing);
 * - `denied`: an approval found a denial (it stands).
 */
export function approvalDecision(
  record: Pick<IdempotencyRecord, 'state' | 'tool' | 'fingerprint' | 'owner'> | undefined,
  decision: ApprovalDecision,
): 'create' | 'not_found' | 'conflict' | 'consumed' | 'changed' | 'write' | 'unchanged' | 'denied' {
  if (record === undefined) return decision.expect === undefined ? 'create' : 'not_found';
  if (record.tool !== decision.tool || record.fingerprint !== decision.fingerprint) return 'conflict';
  if (!isApprovalState(record.state)) return 'consumed';
  if (decision.expect !== undefined && decision.expect.owner !== record.owner) return 'changed';
  if (record.state === 'awaiting_approval') return 'write';
  if (record.state === 'approved') return decision.approved ? 'unchanged' : 'write';
  return decision.approved ? 'denied' : 'unchanged';
}
