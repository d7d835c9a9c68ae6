// The operator's reads on SQLite, each one autocommit SELECT: list (statements/list-*.sql: the
// primary key or a scan, no index a complete would move), and a key's resolutions
// (statements/select-resolutions.sql).
import type { ListOptions, ListPage, RecordRef, ResolutionEntry } from '@toolfence/core/store';
import { journalEntry, listPage, listQuery } from '../shared/sql-listing.js';
import type { RecordsDatabase } from './backend.js';
import { type RecordRow, toRecord } from './record-codec.js';

/** `list` on SQLite (options already checked), at `now`. @throws StoreInputError */
export function listRecords(db: RecordsDatabase, options: ListOptions, now: number): ListPage {
  const query = listQuery(options);
  const rows = db.statement(query.order === 'oldest' ? 'listOldest' : 'listNewest').all({
    tenant: options.allTenants === true ? null : options.tenant,
    now,
    states: JSON.stringify(query.storedStates),
    expiredOnly: query.expiredOnly ? 1 : 0,
    tool: options.tool ?? null,
    olderThanMs: options.olderThanMs ?? null,
    cursorUpdatedAtMs: query.cursor?.updatedAtMs ?? null,
    cursorTenant: query.cursor?.tenant ?? null,
    cursorKey: query.cursor?.key ?? null,
    limit: query.rowLimit,
  }) as RecordRow[];
  return listPage(rows, toRecord, query, now);
}

/** `resolutions` on SQLite, live at `now`, newest first. */
export function readResolutions(db: RecordsDatabase, ref: RecordRef, now: number): ResolutionEntry[] {
  const rows = db.statement('selectResolutions').all({ tenant: ref.tenant, key: ref.key, now });
  return (rows as Record<string, unknown>[]).map(journalEntry);
}
