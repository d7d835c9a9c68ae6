// MemoryStore's record helpers: ids, holders, the recorded error texts, snapshots.
import type {
  ClaimOptions,
  Holder,
  IdempotencyRecord,
  RecordedError,
  RecordRef,
  Resolution,
  ResolutionEntry,
} from './idempotency-store.js';

export type MutableRecord = { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } & {
  /** Retention window of the claim, so a renewal keeps the record a full window past its lease. */
  retentionMs: number;
};

export function recordId(ref: RecordRef): string {
  // NUL cannot appear in a hex key, so tenant and key never run together ambiguously.
  return `${ref.key}\u0000${ref.tenant}`;
}

export function isHolder(record: MutableRecord, holder: Holder): boolean {
  return record.fence === holder.fence && record.owner === holder.owner;
}

// The same texts as the Redis and PostgreSQL stores, so a record reads alike on every store.
export function leaseExpiredError(record: MutableRecord): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${record.attempt} expired before its outcome was recorded; the effect may have happened`,
  };
}

export function attemptsLostError(record: MutableRecord, maxAttempts: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${record.attempt} expired and ${maxAttempts} attempt(s) were lost`,
  };
}

export function snapshot(record: MutableRecord): IdempotencyRecord {
  const { retentionMs: _retentionMs, ...visible } = record;
  return visible;
}

/** What a claim records for operators (absent fields stay absent). */
export function callInfo(options: ClaimOptions): Pick<MutableRecord, 'runId' | 'callId' | 'description'> {
  const info: Pick<MutableRecord, 'runId' | 'callId' | 'description'> = {};
  if (options.runId !== undefined) info.runId = options.runId;
  if (options.callId !== undefined) info.callId = options.callId;
  if (options.description !== undefined) info.description = options.description;
  return info;
}

export function resolutionEntry(record: MutableRecord, resolution: Resolution, now: number): ResolutionEntry {
  const entry: { -readonly [K in keyof ResolutionEntry]: ResolutionEntry[K] } = {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: record.state as 'indeterminate' | 'abandoned',
    fence: record.fence,
    attempt: record.attempt,
    atMs: now,
  };
  if (record.error !== undefined) entry.error = { ...record.error };
  if (resolution.by !== undefined) entry.by = resolution.by;
  if (resolution.reason !== undefined) entry.reason = resolution.reason;
  return entry;
}

/** The snapshot of a record that may be absent. */
export function snapshotOf(record: MutableRecord | undefined): IdempotencyRecord | undefined {
  return record === undefined ? undefined : snapshot(record);
}
