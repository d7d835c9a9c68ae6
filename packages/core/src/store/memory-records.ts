// The MemoryStore's record table: records by id, live only within retention (removed lazily on
// access and by an incremental sweep on every write, so memory stays bounded), with the
// per-tenant index `list` reads, kept in the same synchronous steps that add and delete records.
import type {
  ClaimOptions,
  Holder,
  IdempotencyRecord,
  RecordRef,
  Resolution,
  ResolutionEntry,
} from './idempotency-store.js';
import { TenantIndex } from './memory-listing.js';

/** A record as the MemoryStore keeps it. */
export type MutableRecord = { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } & {
  /** Retention window of the claim, so a renewal keeps the record a full window past its lease. */
  retentionMs: number;
};

/** How many records each write examines for expiry (incremental sweep, as Redis does). */
const SWEEP_PER_WRITE = 4;

export function recordId(ref: RecordRef): string {
  // NUL cannot appear in a hex key, so tenant and key never run together ambiguously.
  return `${ref.key}\u0000${ref.tenant}`;
}

export function isHolder(record: MutableRecord, holder: Holder): boolean {
  return record.fence === holder.fence && record.owner === holder.owner;
}

/** The record as callers see it (a copy without the store's own fields). */
export function snapshot(record: MutableRecord): IdempotencyRecord {
  const { retentionMs: _retentionMs, ...visible } = record;
  return visible;
}

/** The snapshot of a record that may be absent. */
export function snapshotOf(record: MutableRecord | undefined): IdempotencyRecord | undefined {
  return record === undefined ? undefined : snapshot(record);
}

/** What a claim records for operators (absent fields stay absent). */
export function callInfo(options: ClaimOptions): Pick<MutableRecord, 'runId' | 'callId' | 'description'> {
  const info: Pick<MutableRecord, 'runId' | 'callId' | 'description'> = {};
  if (options.runId !== undefined) info.runId = options.runId;
  if (options.callId !== undefined) info.callId = options.callId;
  if (options.description !== undefined) info.description = options.description;
  return info;
}

/** The journal entry of an operator resolution of `record` (still in its unresolved state). */
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

export class MemoryRecords {
  private readonly records = new Map<string, MutableRecord>();
  /** Record ids per tenant, for `list`: changed only with `records`, in the same step. */
  readonly index = new TenantIndex();
  private sweepCursor: Iterator<[string, MutableRecord]> | undefined;

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.records.size;
  }

  set(id: string, record: MutableRecord): void {
    this.records.set(id, record);
    this.index.add(record.tenant, id);
  }

  /** Deletes a record and its index entry, in the same synchronous step. */
  delete(id: string): void {
    const record = this.records.get(id);
    if (record === undefined) return;
    this.records.delete(id);
    this.index.remove(record.tenant, id);
  }

  entries(): IterableIterator<[string, MutableRecord]> {
    return this.records.entries();
  }

  /** The record if it exists and is within retention; removes it otherwise. */
  live(id: string, now: number): MutableRecord | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    if (record.expiresAtMs <= now) {
      this.delete(id);
      return undefined;
    }
    return record;
  }

  sweep(now: number): void {
    for (let examined = 0; examined < SWEEP_PER_WRITE; examined++) {
      this.sweepCursor ??= this.records.entries();
      const next = this.sweepCursor.next();
      if (next.done === true) {
        this.sweepCursor = undefined;
        return;
      }
      const [id, record] = next.value;
      if (record.expiresAtMs <= now) this.delete(id);
    }
  }
}
