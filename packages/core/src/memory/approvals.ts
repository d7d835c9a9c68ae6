// Approvals on the MemoryStore: the record a call that needs an approval writes before its claim,
// the claim that consumes an approval (the same synchronous step as the claim's decision), and an
// operator's decision, each one synchronous step (docs/store-contract.md, "Approvals").

import { approvalDecision } from '../store/approval-decisions.js';
import type { ApprovalDecision, ApprovalState } from '../store/approval-records.js';
import type { DecideResult } from '../store/approval-results.js';
import type { ClaimOptions, ClaimResult, RecordRef } from '../store/idempotency-store.js';
import type { MemoryRecords } from './backend.js';
import { type MutableRecord, newRecord, snapshot } from './record-codec.js';

/** Fields of a record before its claim: no attempt yet, so no holder's write matches it. */
function beforeClaim(record: MutableRecord, state: ApprovalState, now: number, retentionMs: number): void {
  record.state = state;
  record.fence = 0;
  record.attempt = 0;
  record.leaseExpiresAtMs = 0;
  record.claimedAtMs = undefined;
  record.updatedAtMs = now;
  record.expiresAtMs = now + retentionMs;
  record.retentionMs = retentionMs;
}

/** No live record, and the call needs an approval: write `awaiting_approval` and say so. */
export function askApproval(
  records: MemoryRecords,
  ref: RecordRef,
  options: ClaimOptions,
  now: number,
): ClaimResult {
  const created = newRecord(ref, options, now);
  beforeClaim(created, 'awaiting_approval', now, options.retentionMs);
  records.add(created);
  return { status: 'approval_required', record: snapshot(created) };
}

/**
 * The claim that uses an approval: the record becomes this claim's `in_progress` life at fence 1,
 * attempt 1, in the step that read `approved`, so no other claim can use the same approval.
 */
export function consumeApproval(record: MutableRecord, options: ClaimOptions, now: number): ClaimResult {
  record.state = 'in_progress';
  record.fence = 1;
  record.attempt = 1;
  record.owner = options.owner;
  record.leaseExpiresAtMs = now + options.leaseMs;
  record.expiresAtMs = now + options.leaseMs + options.retentionMs;
  record.retentionMs = options.retentionMs;
  // The claim's ids replace those of the request (absent ones included); the approval stays.
  record.runId = options.runId;
  record.callId = options.callId;
  record.description = options.description;
  record.codec = options.codec;
  record.claimedAtMs = now;
  record.updatedAtMs = now;
  return {
    status: 'acquired',
    fence: 1,
    attempt: 1,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    takeover: false,
    ...(record.approval === undefined ? {} : { approval: record.approval }),
  };
}

function audit(decision: ApprovalDecision, now: number): MutableRecord['approval'] {
  return {
    approved: decision.approved,
    ...(decision.by === undefined ? {} : { by: decision.by }),
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    atMs: now,
  };
}

/** An operator's decision on the call under `ref`, at `now` (the store's clock). */
export function decideOn(
  records: MemoryRecords,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
  now: number,
): DecideResult {
  records.sweep(now);
  const record = records.live(ref, now);
  const state: ApprovalState = decision.approved ? 'approved' : 'denied';
  const action = approvalDecision(record, decision);
  switch (action) {
    case 'not_found':
      return { status: 'not_found' };
    case 'create': {
      const created = newRecord(
        ref,
        {
          tool: decision.tool,
          fingerprint: decision.fingerprint,
          // No call asked yet: the request has no owner.
          owner: '',
          leaseMs: 0,
          retentionMs,
          mode: 'at-most-once',
          maxAttempts: 1,
          checkFingerprint: true,
          ...(decision.runId === undefined ? {} : { runId: decision.runId }),
          ...(decision.callId === undefined ? {} : { callId: decision.callId }),
          ...(decision.description === undefined ? {} : { description: decision.description }),
          ...(decision.codec === undefined ? {} : { codec: decision.codec }),
        },
        now,
      );
      beforeClaim(created, state, now, retentionMs);
      created.approval = audit(decision, now);
      records.add(created);
      return { status: 'decided', record: snapshot(created) };
    }
    case 'write': {
      const found = record as MutableRecord;
      beforeClaim(found, state, now, retentionMs);
      found.approval = audit(decision, now);
      return { status: 'decided', record: snapshot(found) };
    }
    case 'unchanged':
      return { status: 'decided', record: snapshot(record as MutableRecord) };
    default:
      return { status: action, record: snapshot(record as MutableRecord) };
  }
}
