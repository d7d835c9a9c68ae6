// Operating on records by key or tenant, not as their holder: resolve (the operator; its
// resolution entry is journaled by the same statement), forget (a tenant's records and
// resolutions) and cleanup (records and resolution entries past retention).
import type { RecordRef, Resolution, ResolveResult } from '@toolfence/core/store';
import { resolutionApplies } from '@toolfence/core/store';
import type { StatementRunner } from './backend.js';
import { type Row, storedOutcome, toRecord } from './record-codec.js';

export async function resolveRecord(
  runner: StatementRunner,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
): Promise<ResolveResult> {
  let row: Row | undefined;
  if ('outcome' in resolution) {
    const stored = storedOutcome(resolution.outcome);
    row = await runner.queryOne('resolve', runner.sql.resolveCompleted, [
      ref.tenant,
      ref.key,
      stored.text,
      retentionMs,
      stored.bytes,
      resolution.by ?? null, // the audit, kept in the resolution entry
      resolution.reason ?? null,
      resolution.expect?.fence ?? null, // the holder the operator saw (NULL: any holder)
      resolution.expect?.owner ?? null,
      resolution.force === true, // settle even a live holder
    ]);
  } else {
    row = await runner.queryOne('resolve', runner.sql.resolveReleased, [
      ref.tenant,
      ref.key,
      retentionMs,
      resolution.by ?? null,
      resolution.reason ?? null,
      resolution.expect?.fence ?? null,
      resolution.expect?.owner ?? null,
      resolution.force === true,
    ]);
  }
  if (row === undefined) return { status: 'not_found' };
  if (row.changed === true) return { status: 'resolved' };
  // The row is the record the statement locked and decided on: judge why it did not change. With
  // the expected holder, only a completed record or a live holder (not forced) is left unchanged.
  const record = toRecord(row);
  if (!resolutionApplies(record, resolution)) return { status: 'changed', record };
  return record.state === 'in_progress'
    ? { status: 'holder_alive', record }
    : { status: 'not_resolvable', record };
}

export async function forgetTenant(runner: StatementRunner, tenant: string): Promise<number> {
  const row = await runner.queryOne('forget', runner.sql.forget, [tenant]);
  return Number(row?.erased ?? 0);
}

/** Deletes at most `limit` expired rows, records first, then resolution entries (statements/cleanup.sql). */
export async function deleteExpired(runner: StatementRunner, limit: number): Promise<number> {
  const row = await runner.queryOne('cleanup', runner.sql.cleanup, [limit]);
  return Number(row?.deleted ?? 0);
}
