// The holder's operations on SQLite (renew, complete, release, markIndeterminate), each decided
// inside one BEGIN IMMEDIATE transaction: fence AND owner must match the live row.
import type * as contract from '@toolfence/core/store';
import type { Decided, RecordsDatabase } from './backend.js';
import { isHolder, toRecord } from './record-codec.js';

export function decideRenew(
  db: RecordsDatabase,
  ref: contract.RecordRef,
  holder: contract.Holder,
  leaseMs: number,
  now: number,
): Decided<contract.RenewResult> {
  const row = db.liveRow(ref, now);
  if (row === undefined) return { result: { status: 'lost', reason: 'not_found' } };
  if (!isHolder(row, holder)) return { result: { status: 'lost', reason: 'stale' } };
  if (row.state !== 'in_progress') return { result: { status: 'lost', reason: 'settled' } };
  const leaseExpiresAtMs = now + leaseMs;
  // A live claim outlives its lease by a full retention window (as every store).
  const expiresAtMs = Math.max(row.expires_at_ms, leaseExpiresAtMs + row.retention_ms);
  db.write({ ...row, lease_expires_at_ms: leaseExpiresAtMs, expires_at_ms: expiresAtMs });
  return { result: { status: 'renewed', leaseExpiresAtMs } };
}

export function decideComplete(
  db: RecordsDatabase,
  ref: contract.RecordRef,
  holder: contract.Holder,
  outcome: string,
  retentionMs: number,
  now: number,
): Decided<contract.CompleteResult> {
  db.sweep(now);
  const row = db.liveRow(ref, now);
  if (row === undefined) return { result: { status: 'not_found' } };
  if (!isHolder(row, holder) || row.state === 'completed') {
    return { result: { status: 'stale', record: toRecord(row) } };
  }
  db.write({
    ...row,
    state: 'completed',
    outcome,
    error_type: null,
    error_message: null,
    expires_at_ms: now + retentionMs,
    updated_at_ms: now,
  });
  return { result: { status: 'completed' }, settled: true };
}

export function decideRelease(
  db: RecordsDatabase,
  ref: contract.RecordRef,
  holder: contract.Holder,
  now: number,
): Decided<contract.ReleaseResult> {
  const row = db.liveRow(ref, now);
  if (row === undefined) return { result: { status: 'not_found' } };
  if (!isHolder(row, holder) || row.state !== 'in_progress') {
    return { result: { status: 'stale', record: toRecord(row) } };
  }
  db.run('deleteRecord', [ref.tenant, ref.key]);
  return { result: { status: 'released' }, settled: true };
}

export function decideMarkIndeterminate(
  db: RecordsDatabase,
  ref: contract.RecordRef,
  holder: contract.Holder,
  error: contract.RecordedError,
  retentionMs: number,
  now: number,
): Decided<contract.MarkIndeterminateResult> {
  const row = db.liveRow(ref, now);
  if (row === undefined) return { result: { status: 'not_found' } };
  if (!isHolder(row, holder) || row.state !== 'in_progress') {
    return { result: { status: 'stale', record: toRecord(row) } };
  }
  db.write({
    ...row,
    state: 'indeterminate',
    error_type: error.type,
    error_message: error.message,
    expires_at_ms: now + retentionMs,
    updated_at_ms: now,
  });
  return { result: { status: 'marked' }, settled: true };
}
