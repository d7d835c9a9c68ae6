/**
 * MemoryStore's listing: a page of a tenant's records (backend.ts keeps them by tenant),
 * and the journal of operator resolutions (kept for the retention window each was given, also
 * after a `released` resolution deleted its record).
 */
import type {
  IdempotencyRecord,
  ListedRecord,
  ListOptions,
  ListPage,
  ResolutionEntry,
} from '../store/idempotency-store.js';
import {
  afterCursor,
  compareListPositions,
  decodeListCursor,
  encodeListCursor,
  listedRecordOf,
  listedStates,
  recordMatches,
} from '../store/list-cursor.js';

/**
 * One page of the live records `live` gives (those of the tenant listed, or of every tenant),
 * filtered and ordered as docs/store-contract.md ("Listing") says.
 */
export function listPage(live: Iterable<IdempotencyRecord>, options: ListOptions, nowMs: number): ListPage {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const matching: ListedRecord[] = [];
  for (const record of live) {
    if (!recordMatches(record, options, states, nowMs)) continue;
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
