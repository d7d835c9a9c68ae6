/**
 * MemoryStore's listing: a per-tenant index of record ids kept in the same synchronous steps that
 * create and delete records, and the journal of operator resolutions (kept for the retention
 * window each was given, also after a `released` resolution deleted its record).
 */
import type {
  IdempotencyRecord,
  ListedRecord,
  ListOptions,
  ListPage,
  ResolutionEntry,
} from './idempotency-store.js';
import {
  afterCursor,
  compareListPositions,
  decodeListCursor,
  encodeListCursor,
  listedRecordOf,
  listedStates,
  recordMatches,
} from './list-cursor.js';

/** Record ids per tenant. */
export class TenantIndex {
  private readonly byTenant = new Map<string, Set<string>>();

  add(tenant: string, id: string): void {
    let ids = this.byTenant.get(tenant);
    if (ids === undefined) {
      ids = new Set();
      this.byTenant.set(tenant, ids);
    }
    ids.add(id);
  }

  remove(tenant: string, id: string): void {
    const ids = this.byTenant.get(tenant);
    if (ids === undefined) return;
    ids.delete(id);
    if (ids.size === 0) this.byTenant.delete(tenant);
  }

  /** The ids of one tenant, or of every tenant. */
  ids(tenant: string | undefined): string[] {
    if (tenant !== undefined) return [...(this.byTenant.get(tenant) ?? [])];
    const all: string[] = [];
    for (const ids of this.byTenant.values()) all.push(...ids);
    return all;
  }
}

/**
 * One page: the live records `read(id)` gives for the index's ids, filtered and ordered as
 * docs/store-contract.md ("Listing") says. `read` drops expired records (and their index entry).
 */
export function listPage(
  index: TenantIndex,
  read: (id: string) => IdempotencyRecord | undefined,
  options: ListOptions,
  nowMs: number,
): ListPage {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const matching: ListedRecord[] = [];
  for (const id of index.ids(options.allTenants === true ? undefined : options.tenant)) {
    const record = read(id);
    if (record === undefined || !recordMatches(record, options, states, nowMs)) continue;
    const position = positionOf(record);
    if (afterCursor(position, cursor, order)) matching.push(listedRecordOf(record));
  }
  matching.sort((a, b) => compareListPositions(positionOf(a), positionOf(b)));
  if (order === 'newest') matching.reverse();
  const records = matching.slice(0, options.limit);
  const last = records.at(-1);
  const more = matching.length > options.limit && last !== undefined;
  return more ? { records, cursor: encodeListCursor(positionOf(last), order), nowMs } : { records, nowMs };
}

function positionOf(record: ListedRecord): { updatedAtMs: number; tenant: string; key: string } {
  return { updatedAtMs: record.updatedAtMs ?? 0, tenant: record.tenant, key: record.key };
}

interface JournalEntry {
  readonly entry: ResolutionEntry;
  readonly expiresAtMs: number;
}

/** Operator resolutions per record id, newest first. */
export class ResolutionJournal {
  private readonly entries = new Map<string, JournalEntry[]>();

  add(id: string, entry: ResolutionEntry, expiresAtMs: number): void {
    const list = this.entries.get(id) ?? [];
    list.unshift({ entry, expiresAtMs });
    this.entries.set(id, list);
  }

  /** The live entries of a record, newest first (expired ones are dropped). */
  read(id: string, nowMs: number): ResolutionEntry[] {
    const list = this.entries.get(id);
    if (list === undefined) return [];
    const live = list.filter((item) => item.expiresAtMs > nowMs);
    if (live.length === 0) this.entries.delete(id);
    else this.entries.set(id, live);
    return live.map((item) => item.entry);
  }

  /** Erase every entry of a tenant. */
  forget(tenant: string): void {
    for (const [id, list] of this.entries) {
      if (list[0]?.entry.tenant === tenant) this.entries.delete(id);
    }
  }
}
