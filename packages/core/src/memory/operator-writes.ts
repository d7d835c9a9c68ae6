// Operating on MemoryStore records not as their holder: resolve (the operator, journaled in the
// same step) and forget (a tenant's records and resolutions).
import type { RecordRef, Resolution, ResolveResult } from '../store/idempotency-store.js';
import { resolutionApplies, resolveDecision } from '../store/store-input.js';
import type { MemoryRecords } from './backend.js';
import type { ResolutionJournal } from './operator-reads.js';
import { recordId, resolutionEntry, snapshot } from './record-codec.js';

export function decideResolve(
  records: MemoryRecords,
  journal: ResolutionJournal,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
  now: number,
): { result: ResolveResult; settled: boolean } {
  const record = records.live(ref, now);
  if (record === undefined) return { result: { status: 'not_found' }, settled: false };
  // Another holder than the one the operator saw: another attempt or another life of the key.
  if (!resolutionApplies(record, resolution)) {
    return { result: { status: 'changed', record: snapshot(record) }, settled: false };
  }
  // A completed record is settled; a live holder's body may still take effect.
  const decision = resolveDecision(record, resolution, now);
  if (decision !== 'settle')
    return { result: { status: decision, record: snapshot(record) }, settled: false };
  const entry = resolutionEntry(record, resolution, now);
  if ('outcome' in resolution) {
    record.state = 'completed';
    record.outcome = resolution.outcome;
    record.error = undefined;
    record.expiresAtMs = now + retentionMs;
    record.updatedAtMs = now;
    record.resolution = entry;
  } else {
    records.delete(ref);
  }
  journal.add(recordId(ref), entry, now + retentionMs);
  return { result: { status: 'resolved' }, settled: true };
}

/**
 * Erases every record of `tenant` (with its index entries) and its resolutions; `settled` is
 * called with each erased record's id.
 */
export function forgetTenant(
  records: MemoryRecords,
  journal: ResolutionJournal,
  tenant: string,
  settled: (id: string) => void,
): number {
  let erased = 0;
  for (const record of records.all(tenant)) {
    records.delete(record);
    settled(recordId(record));
    erased += 1;
  }
  journal.forget(tenant);
  return erased;
}
