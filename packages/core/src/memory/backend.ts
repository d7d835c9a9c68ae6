// The MemoryStore's record table: records by tenant and key, live only within retention (removed
// lazily on access and by an incremental sweep on every record added, so memory stays bounded); a
// tenant's records are what `list` and `forget` read.
import type { RecordRef } from '../store/idempotency-store.js';
import type { MutableRecord } from './record-codec.js';

/** How many records each write examines for expiry (incremental sweep, as Redis does). */
const SWEEP_PER_WRITE = 4;

/**
 * The records, by tenant, then by key: a lookup hashes the key string the guard already holds
 * (no `key + tenant` id made per operation), and a tenant's map is the index `list` and
 * `forget` read (no second index to keep in step). A tenant's map goes when its last record does.
 */
export class MemoryRecords {
  private readonly byTenant = new Map<string, Map<string, MutableRecord>>();
  private count = 0;
  private sweepTenants: Iterator<Map<string, MutableRecord>> | undefined;
  private sweepRecords: Iterator<MutableRecord> | undefined;

  /** Number of records held (live or not yet swept). */
  get size(): number {
    return this.count;
  }

  /** Adds a record that is not there (claim decided there is none). */
  add(record: MutableRecord): void {
    let records = this.byTenant.get(record.tenant);
    if (records === undefined) {
      records = new Map();
      this.byTenant.set(record.tenant, records);
    }
    records.set(record.key, record);
    this.count = this.count + 1;
  }

  /** Deletes the record of `ref`, in one synchronous step. */
  delete(ref: RecordRef): void {
    const records = this.byTenant.get(ref.tenant);
    if (records === undefined || !records.delete(ref.key)) return;
    this.count = this.count - 1;
    if (records.size === 0) this.byTenant.delete(ref.tenant);
  }

  /** The records of one tenant, or of every tenant (not checked for retention). */
  *all(tenant?: string): IterableIterator<MutableRecord> {
    if (tenant !== undefined) {
      const records = this.byTenant.get(tenant);
      if (records !== undefined) yield* records.values();
      return;
    }
    for (const records of this.byTenant.values()) yield* records.values();
  }

  /** The live records of one tenant, or of every tenant; expired ones are removed on the way. */
  *liveOf(tenant: string | undefined, now: number): IterableIterator<MutableRecord> {
    for (const record of this.all(tenant)) {
      if (record.expiresAtMs > now) yield record;
      else this.delete(record);
    }
  }

  /** The record if it exists and is within retention; removes it otherwise. */
  live(ref: RecordRef, now: number): MutableRecord | undefined {
    const record = this.byTenant.get(ref.tenant)?.get(ref.key);
    if (record === undefined) return undefined;
    if (record.expiresAtMs <= now) {
      this.delete(ref);
      return undefined;
    }
    return record;
  }

  /** Examines the next SWEEP_PER_WRITE records (round robin over every tenant) for expiry. */
  sweep(now: number): void {
    for (let examined = 0; examined < SWEEP_PER_WRITE; ) {
      if (this.sweepRecords === undefined) {
        this.sweepTenants ??= this.byTenant.values();
        const tenant = this.sweepTenants.next();
        if (tenant.done === true) {
          this.sweepTenants = undefined;
          return;
        }
        this.sweepRecords = tenant.value.values();
      }
      const next = this.sweepRecords.next();
      if (next.done === true) {
        this.sweepRecords = undefined;
        continue;
      }
      examined += 1;
      if (next.value.expiresAtMs <= now) this.delete(next.value);
    }
  }
}
