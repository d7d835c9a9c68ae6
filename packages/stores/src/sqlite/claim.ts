// SQLiteStore.claim, decided inside one BEGIN IMMEDIATE transaction exactly as MemoryStore decides
// (packages/core/src/memory/claim.ts): a new record, the holder asking again, a settled or
// busy record, or an expired lease taken over or settled; or a record before its claim (an
// approval asked for, refused or consumed in this same transaction: approvals.ts).
import type { ClaimOptions, ClaimResult, RecordedError, RecordRef } from '@toolfence/core/store';
import { approvalClaimDecision, claimConflicts } from '@toolfence/core/store';
import { askApproval, consumeApproval } from './approvals.js';
import type { Decided, RecordsDatabase } from './backend.js';
import { callInfo, type RecordRow, takeoverInfo, toRecord } from './record-codec.js';

// The same texts as the other stores, so a record reads alike on every store.
function leaseExpiredError(attempt: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired before its outcome was recorded; the effect may have happened`,
  };
}

function attemptsLostError(attempt: number, maxAttempts: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired and ${maxAttempts} attempt(s) were lost`,
  };
}

function claimNew(db: RecordsDatabase, ref: RecordRef, options: ClaimOptions, now: number): ClaimResult {
  const leaseExpiresAtMs = now + options.leaseMs;
  db.run('insertRecord', [
    ref.tenant,
    ref.key,
    options.tool,
    options.fingerprint,
    options.owner,
    leaseExpiresAtMs,
    leaseExpiresAtMs + options.retentionMs,
    options.retentionMs,
    ...callInfo(options),
    now,
    now,
    options.codec ?? null, // the guard's codec, kept with a new life
    leaseExpiresAtMs + options.retentionMs, // the sweep bound
  ]);
  return { status: 'acquired', fence: 1, attempt: 1, leaseExpiresAtMs, takeover: false };
}

/**
 * The holder asking again (a resent request whose reply was lost): answer as the first time, with
 * the lease restarted, since the claimer never got the first answer.
 */
function claimAgain(db: RecordsDatabase, row: RecordRow, options: ClaimOptions, now: number): ClaimResult {
  const leaseExpiresAtMs = Math.max(row.lease_expires_at_ms, now + options.leaseMs);
  const expiresAtMs = Math.max(row.expires_at_ms, leaseExpiresAtMs + options.retentionMs);
  if (leaseExpiresAtMs !== row.lease_expires_at_ms || expiresAtMs !== row.expires_at_ms) {
    db.write({ ...row, lease_expires_at_ms: leaseExpiresAtMs, expires_at_ms: expiresAtMs });
  }
  return {
    status: 'acquired',
    fence: row.fence,
    attempt: row.attempt,
    leaseExpiresAtMs,
    takeover: row.attempt > 1,
  };
}

/** An in-progress record whose lease ran out: settled as unknown, or taken over. */
function claimExpired(
  db: RecordsDatabase,
  row: RecordRow,
  options: ClaimOptions,
  now: number,
): Decided<ClaimResult> {
  if (options.mode === 'at-most-once' || row.attempt >= options.maxAttempts) {
    const state = options.mode === 'at-most-once' ? 'indeterminate' : 'abandoned';
    const error =
      state === 'indeterminate'
        ? leaseExpiredError(row.attempt)
        : attemptsLostError(row.attempt, options.maxAttempts);
    const changed: RecordRow = {
      ...row,
      state,
      error_type: error.type,
      error_message: error.message,
      expires_at_ms: now + options.retentionMs,
      updated_at_ms: now,
    };
    db.write(changed);
    return { result: { status: state, record: toRecord(changed) }, settled: true };
  }
  const leaseExpiresAtMs = now + options.leaseMs;
  db.write({
    ...row,
    fence: row.fence + 1,
    attempt: row.attempt + 1,
    owner: options.owner,
    lease_expires_at_ms: leaseExpiresAtMs,
    expires_at_ms: leaseExpiresAtMs + options.retentionMs,
    retention_ms: options.retentionMs,
    ...takeoverInfo(options, now),
  });
  const result: ClaimResult = {
    status: 'acquired',
    fence: row.fence + 1,
    attempt: row.attempt + 1,
    leaseExpiresAtMs,
    takeover: true,
  };
  return { result };
}

/**
 * The answer a live row gives without any change: a conflict (other tool, or other arguments when
 * they must match), a settled record, or one held by another owner under a live lease (busy).
 * Undefined when the claim needs a write: no live row, the holder asking again, a lapsed lease.
 * Conflict is judged first, as in {@link decideClaim}.
 */
export function answerWithoutChange(
  row: RecordRow | undefined,
  options: ClaimOptions,
  now: number,
): ClaimResult | undefined {
  if (row === undefined) return undefined;
  if (claimConflicts(row, options)) return { status: 'conflict', record: toRecord(row) };
  // Before its claim: wait for or refuse the operator's decision; an approval is consumed by a write.
  const approval = approvalClaimDecision(row);
  if (approval === 'consume') return undefined;
  if (approval !== undefined) return { status: approval, record: toRecord(row) };
  switch (row.state) {
    case 'completed':
      return { status: 'completed', record: toRecord(row) };
    case 'indeterminate':
      return { status: 'indeterminate', record: toRecord(row) };
    case 'abandoned':
      return { status: 'abandoned', record: toRecord(row) };
    default:
      if (row.owner === options.owner || row.lease_expires_at_ms <= now) return undefined;
      return { status: 'busy', record: toRecord(row), nowMs: now };
  }
}

/** The claim decision (inside the transaction, `now` read under the write lock). */
export function decideClaim(
  db: RecordsDatabase,
  ref: RecordRef,
  options: ClaimOptions,
  now: number,
): Decided<ClaimResult> {
  db.sweep(now);
  const row = db.liveRow(ref, now);
  if (row === undefined) {
    if (options.approval === 'required') return { result: askApproval(db, ref, options, now) };
    return { result: claimNew(db, ref, options, now) };
  }
  const answer = answerWithoutChange(row, options, now);
  if (answer !== undefined) return { result: answer };
  if (row.state === 'approved') return { result: consumeApproval(db, row, options, now) };
  if (row.owner === options.owner) return { result: claimAgain(db, row, options, now) };
  return claimExpired(db, row, options, now);
}
