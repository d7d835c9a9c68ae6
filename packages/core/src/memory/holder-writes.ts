// The holder's operations on the MemoryStore (renew, complete, release, markIndeterminate), each
// one synchronous step: fence AND owner must match the live record.
import type * as contract from '../store/idempotency-store.js';
import type { MemoryRecords } from './backend.js';
import { isHolder, snapshot } from './record-codec.js';

export function decideRenew(
  records: MemoryRecords,
  ref: contract.RecordRef,
  holder: contract.Holder,
  leaseMs: number,
  now: number,
): contract.RenewResult {
  const record = records.live(ref, now);
  if (record === undefined) return { status: 'lost', reason: 'not_found' };
  if (!isHolder(record, holder)) return { status: 'lost', reason: 'stale' };
  if (record.state !== 'in_progress') return { status: 'lost', reason: 'settled' };
  record.leaseExpiresAtMs = now + leaseMs;
  // As Redis and PostgreSQL: a live claim outlives its lease by a full retention window, so a
  // long-running holder's record can never expire with its lease (found by the spin model).
  record.expiresAtMs = Math.max(record.expiresAtMs, record.leaseExpiresAtMs + record.retentionMs);
  return { status: 'renewed', leaseExpiresAtMs: record.leaseExpiresAtMs };
}

/** Accepted on `indeterminate` / `abandoned` too: late truth from the holder. */
export function decideComplete(
  records: MemoryRecords,
  ref: contract.RecordRef,
  holder: contract.Holder,
  outcome: string,
  retentionMs: number,
  now: number,
): { result: contract.CompleteResult; settled: boolean } {
  records.sweep(now);
  const record = records.live(ref, now);
  if (record === undefined) return { result: { status: 'not_found' }, settled: false };
  if (!isHolder(record, holder) || record.state === 'completed') {
    return { result: { status: 'stale', record: snapshot(record) }, settled: false };
  }
  record.state = 'completed';
  record.outcome = outcome;
  record.error = undefined;
  record.expiresAtMs = now + retentionMs;
  record.updatedAtMs = now;
  return { result: { status: 'completed' }, settled: true };
}

export function decideRelease(
  records: MemoryRecords,
  ref: contract.RecordRef,
  holder: contract.Holder,
  now: number,
): { result: contract.ReleaseResult; settled: boolean } {
  const record = records.live(ref, now);
  if (record === undefined) return { result: { status: 'not_found' }, settled: false };
  if (!isHolder(record, holder) || record.state !== 'in_progress') {
    return { result: { status: 'stale', record: snapshot(record) }, settled: false };
  }
  records.delete(ref);
  return { result: { status: 'released' }, settled: true };
}

export function decideMarkIndeterminate(
  records: MemoryRecords,
  ref: contract.RecordRef,
  holder: contract.Holder,
  error: contract.RecordedError,
  retentionMs: number,
  now: number,
): { result: contract.MarkIndeterminateResult; settled: boolean } {
  const record = records.live(ref, now);
  if (record === undefined) return { result: { status: 'not_found' }, settled: false };
  if (!isHolder(record, holder) || record.state !== 'in_progress') {
    return { result: { status: 'stale', record: snapshot(record) }, settled: false };
  }
  record.state = 'indeterminate';
  record.error = { type: error.type, message: error.message };
  record.expiresAtMs = now + retentionMs;
  record.updatedAtMs = now;
  return { result: { status: 'marked' }, settled: true };
}
