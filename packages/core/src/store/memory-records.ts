// The MemoryStore's record table: records by id, live only within retention (removed lazily on
// access and by an incremental sweep on every write, so memory stays bounded).
import type { Holder, IdempotencyRecord, RecordRef } from './idempotency-store.js';

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

export class MemoryRecords {
  private readonly records = new Map<string, MutableRecord>();
  private sweepCursor: Iterator<[string, MutableRecord]> | undefined;

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.records.size;
  }

  set(id: string, record: MutableRecord): void {
    this.records.set(id, record);
  }

  delete(id: string): void {
    this.records.delete(id);
  }

  entries(): IterableIterator<[string, MutableRecord]> {
    return this.records.entries();
  }

  /** The record if it exists and is within retention; removes it otherwise. */
  live(id: string, now: number): MutableRecord | undefined {
    const record = this.records.get(id);
    if (record === undefined) return undefined;
    if (record.expiresAtMs <= now) {
      this.records.delete(id);
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
      if (record.expiresAtMs <= now) this.records.delete(id);
    }
  }
}
