// Operating on MemoryStore records not as their holder: resolve (the operator) and forget (a
// tenant's records).
import type { RecordRef, Resolution, ResolveResult } from './idempotency-store.js';
import { type MemoryRecords, recordId, snapshot } from './memory-records.js';

export function decideResolve(
  records: MemoryRecords,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
  now: number,
): { result: ResolveResult; settled: boolean } {
  const id = recordId(ref);
  const record = records.live(id, now);
  if (record === undefined) return { result: { status: 'not_found' }, settled: false };
  if (record.state !== 'indeterminate' && record.state !== 'abandoned') {
    return { result: { status: 'not_resolvable', record: snapshot(record) }, settled: false };
  }
  if ('outcome' in resolution) {
    record.state = 'completed';
    record.outcome = resolution.outcome;
    delete record.error;
    record.expiresAtMs = now + retentionMs;
  } else {
    records.delete(id);
  }
  return { result: { status: 'resolved' }, settled: true };
}

/** Erases every record of `tenant`; `settled` is called with each erased record's id. */
export function forgetTenant(records: MemoryRecords, tenant: string, settled: (id: string) => void): number {
  let erased = 0;
  for (const [id, record] of records.entries()) {
    if (record.tenant === tenant) {
      records.delete(id);
      settled(id);
      erased += 1;
    }
  }
  return erased;
}
