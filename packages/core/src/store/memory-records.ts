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

type VisibleRecord = { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] };

/** A record as the MemoryStore keeps it. */
export type MutableRecord = VisibleRecord & {
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

/**
 * The record as callers see it (a copy without the store's own fields; absent fields stay
 * absent). Field by field: a rest copy (`{ retentionMs, ...visible }`) took V8's slow path,
 * ~5 % of a repeat's CPU (bench/RESULTS.md, "Issue 22, run 3 changes").
 */
export function snapshot(record: MutableRecord): IdempotencyRecord {
  const visible: VisibleRecord = {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    fingerprint: record.fingerprint,
    state: record.state,
    fence: record.fence,
    attempt: record.attempt,
    owner: record.owner,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    expiresAtMs: record.expiresAtMs,
  };
  copyOptional(record, visible);
  return visible;
}

/** The fields `snapshot` copies: a field added to IdempotencyRecord fails to compile here. */
type CopiedField =
  | 'key'
  | 'tenant'
  | 'tool'
  | 'fingerprint'
  | 'state'
  | 'fence'
  | 'attempt'
  | 'owner'
  | 'leaseExpiresAtMs'
  | 'expiresAtMs'
  | 'outcome'
  | 'error'
  | 'runId'
  | 'callId'
  | 'description'
  | 'claimedAtMs'
  | 'updatedAtMs'
  | 'resolution';
const everyFieldCopied: Exclude<keyof IdempotencyRecord, CopiedField> extends never ? true : never = true;
void everyFieldCopied;

function copyOptional(from: MutableRecord, to: VisibleRecord): void {
  if (from.outcome !== undefined) to.outcome = from.outcome;
  if (from.error !== undefined) to.error = from.error;
  if (from.runId !== undefined) to.runId = from.runId;
  if (from.callId !== undefined) to.callId = from.callId;
  if (from.description !== undefined) to.description = from.description;
  if (from.claimedAtMs !== undefined) to.claimedAtMs = from.claimedAtMs;
  if (from.updatedAtMs !== undefined) to.updatedAtMs = from.updatedAtMs;
  if (from.resolution !== undefined) to.resolution = from.resolution;
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
  private sweepCursor: Iterator<MutableRecord> | undefined;

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
      // Values, not entries: no [id, record] pair per record examined; the id of the rare
      // expired one is made again from the record.
      this.sweepCursor ??= this.records.values();
      const next = this.sweepCursor.next();
      if (next.done === true) {
        this.sweepCursor = undefined;
        return;
      }
      const record = next.value;
      if (record.expiresAtMs <= now) this.delete(recordId(record));
    }
  }
}
