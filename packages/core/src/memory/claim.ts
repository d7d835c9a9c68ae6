// MemoryStore.claim, decided in one synchronous step: a new record, the holder asking again, a
// settled or busy record, an expired lease settled as unknown or taken over, or a record before
// its claim (an approval asked for, refused or consumed: approvals.ts). The model
// (spec/toolfence.pml, claim_decide) follows this file; spec/README.md maps its steps here.
import { approvalClaimDecision, claimConflicts } from '../store/approval-decisions.js';
import type { ClaimOptions, ClaimResult, RecordedError, RecordRef } from '../store/idempotency-store.js';
import { askApproval, consumeApproval } from './approvals.js';
import type { MemoryRecords } from './backend.js';
import { type MutableRecord, newRecord, snapshot } from './record-codec.js';

// The same texts as the Redis and PostgreSQL stores, so a record reads alike on every store.
function leaseExpiredError(record: MutableRecord): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${record.attempt} expired before its outcome was recorded; the effect may have happened`,
  };
}

function attemptsLostError(record: MutableRecord, maxAttempts: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${record.attempt} expired and ${maxAttempts} attempt(s) were lost`,
  };
}

function claimNew(records: MemoryRecords, ref: RecordRef, options: ClaimOptions, now: number): ClaimResult {
  // The sweep runs where the table grows: a claim answered from a live record adds nothing, so a
  // repeat does not pay for it, and every record added still examines SWEEP_PER_WRITE others.
  records.sweep(now);
  const created = newRecord(ref, options, now);
  records.add(created);
  return {
    status: 'acquired',
    fence: 1,
    attempt: 1,
    leaseExpiresAtMs: created.leaseExpiresAtMs,
    takeover: false,
  };
}

/**
 * The holder asking again (a resent request whose reply was lost): answer as the first time,
 * with the lease restarted, since the claimer never got the first answer.
 */
function claimAgain(record: MutableRecord, options: ClaimOptions, now: number): ClaimResult {
  record.leaseExpiresAtMs = Math.max(record.leaseExpiresAtMs, now + options.leaseMs);
  record.expiresAtMs = Math.max(record.expiresAtMs, record.leaseExpiresAtMs + options.retentionMs);
  return {
    status: 'acquired',
    fence: record.fence,
    attempt: record.attempt,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    takeover: record.attempt > 1,
  };
}

/** An in-progress record whose lease ran out; `settled(record)` is called when it settles. */
function claimExpired(
  record: MutableRecord,
  options: ClaimOptions,
  now: number,
  settled: (ref: RecordRef) => void,
): ClaimResult {
  if (options.mode === 'at-most-once') {
    record.state = 'indeterminate';
    record.error = leaseExpiredError(record);
    record.expiresAtMs = now + options.retentionMs;
    record.updatedAtMs = now;
    settled(record);
    return { status: 'indeterminate', record: snapshot(record) };
  }
  if (record.attempt >= options.maxAttempts) {
    record.state = 'abandoned';
    record.error = attemptsLostError(record, options.maxAttempts);
    record.expiresAtMs = now + options.retentionMs;
    record.updatedAtMs = now;
    settled(record);
    return { status: 'abandoned', record: snapshot(record) };
  }
  record.fence += 1;
  record.attempt += 1;
  record.owner = options.owner;
  record.leaseExpiresAtMs = now + options.leaseMs;
  record.expiresAtMs = now + options.leaseMs + options.retentionMs;
  record.retentionMs = options.retentionMs;
  // The new attempt's ids replace the old ones (absent ones included).
  record.runId = options.runId;
  record.callId = options.callId;
  record.description = options.description;
  record.claimedAtMs = now;
  record.updatedAtMs = now;
  return {
    status: 'acquired',
    fence: record.fence,
    attempt: record.attempt,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    takeover: true,
  };
}

/** The claim decision at `now` (the store's clock); `settled(ref)` wakes the record's waiters. */
export function decideClaim(
  records: MemoryRecords,
  ref: RecordRef,
  options: ClaimOptions,
  now: number,
  settled: (ref: RecordRef) => void,
): ClaimResult {
  const record = records.live(ref, now);
  if (record === undefined) {
    return options.approval === 'required'
      ? askApproval(records, ref, options, now)
      : claimNew(records, ref, options, now);
  }
  if (claimConflicts(record, options)) return { status: 'conflict', record: snapshot(record) };
  // Before its claim: wait for, refuse, or consume the operator's decision in this same step.
  const approval = approvalClaimDecision(record);
  if (approval === 'consume') return consumeApproval(record, options, now);
  if (approval !== undefined) return { status: approval, record: snapshot(record) };
  if (record.state === 'in_progress' && record.owner === options.owner)
    return claimAgain(record, options, now);
  switch (record.state) {
    case 'completed':
      return { status: 'completed', record: snapshot(record) };
    case 'indeterminate':
      return { status: 'indeterminate', record: snapshot(record) };
    case 'abandoned':
      return { status: 'abandoned', record: snapshot(record) };
    default:
      break;
  }
  if (record.leaseExpiresAtMs > now) {
    return { status: 'busy', record: snapshot(record), nowMs: now };
  }
  return claimExpired(record, options, now, settled);
}
