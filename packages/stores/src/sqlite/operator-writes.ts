// Operating on records not as their holder, on SQLite: resolve (the operator, journaled in the
// same transaction), forget (a tenant's records and resolutions) and cleanup (records and
// resolution entries past retention), each one transaction.
import type { RecordRef, Resolution, ResolveResult } from '@toolfence/core/store';
import {
  checkOutcome,
  checkResolutionAudit,
  checkResolutionCondition,
  checkResolutionForce,
  resolutionApplies,
  resolveDecision,
  StoreInputError,
} from '@toolfence/core/store';
import type { Decided, RecordsDatabase } from './backend.js';
import { journalRow, resolutionEntryOf, toRecord } from './record-codec.js';

export function checkResolution(resolution: Resolution): void {
  if (resolution === null || typeof resolution !== 'object')
    throw new StoreInputError('resolution', 'must be an object');
  if ('outcome' in resolution) checkOutcome(resolution.outcome);
  else if ((resolution as { released?: unknown }).released !== true) {
    throw new StoreInputError('resolution', 'must be { outcome } or { released: true }');
  }
  checkResolutionAudit(resolution);
  checkResolutionCondition(resolution);
  checkResolutionForce(resolution);
}

export function decideResolve(
  db: RecordsDatabase,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
  now: number,
): Decided<ResolveResult> {
  const row = db.liveRow(ref, now);
  if (row === undefined) return { result: { status: 'not_found' } };
  // Another holder than the one the operator saw: another attempt or another life of the key.
  if (!resolutionApplies(row, resolution)) return { result: { status: 'changed', record: toRecord(row) } };
  // A completed record is settled; a live holder's body may still take effect.
  const decision = resolveDecision(
    { state: row.state, leaseExpiresAtMs: row.lease_expires_at_ms },
    resolution,
    now,
  );
  if (decision !== 'settle') return { result: { status: decision, record: toRecord(row) } };
  const entry = resolutionEntryOf(row, resolution, now);
  // The journal grows only here, so sweeping a few expired entries here keeps it bounded.
  db.sweepResolutions(now);
  db.run('insertResolution', journalRow(entry, now + retentionMs));
  if ('outcome' in resolution) {
    db.write({
      ...row,
      state: 'completed',
      outcome: resolution.outcome,
      error_type: null,
      error_message: null,
      expires_at_ms: now + retentionMs,
      updated_at_ms: now,
      resolution: JSON.stringify(entry),
    });
  } else {
    db.run('deleteRecord', [ref.tenant, ref.key]);
  }
  return { result: { status: 'resolved' }, settled: true };
}

/** Deletes every row of `tenant` and its resolutions; the answer counts the live rows. */
export function decideForget(db: RecordsDatabase, tenant: string, now: number): Decided<number> {
  const live = (db.statement('countLiveOfTenant').get(tenant, now) as { live: number }).live;
  db.run('forget', [tenant]);
  db.run('forgetResolutions', [tenant]);
  return { result: live };
}

/**
 * Deletes at most `limit` rows past retention: expired records first, then, with what is left of
 * `limit`, expired resolution entries. The answer counts both.
 */
export function decideCleanup(db: RecordsDatabase, limit: number, now: number): Decided<number> {
  const records = db.run('sweep', [now, now, limit]).changes;
  const entries = records < limit ? db.run('sweepResolutions', [now, limit - records]).changes : 0;
  return { result: records + entries };
}
