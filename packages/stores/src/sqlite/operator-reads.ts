// The operator's reads on SQLite, each one autocommit SELECT: list, from the partial listing
// indexes (sql/list-*.sql), and a key's resolutions (sql/select-resolutions.sql).
import {
  decodeListCursor,
  encodeListCursor,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  listedStates,
  type RecordRef,
  type ResolutionEntry,
} from '@toolfence/core';
import { type RecordRow, toRecord } from './record-row.js';
import type { RecordsDatabase } from './records-database.js';

/** `list` on SQLite (options already checked), at `now`. @throws StoreInputError */
export function listRecords(db: RecordsDatabase, options: ListOptions, now: number): ListPage {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const stored = new Set<string>();
  for (const state of states) stored.add(state === 'lease_expired' ? 'in_progress' : state);
  const rows = db.statement(order === 'oldest' ? 'listOldest' : 'listNewest').all({
    tenant: options.allTenants === true ? null : options.tenant,
    now,
    states: JSON.stringify([...stored]),
    expiredOnly: states.has('lease_expired') && !states.has('in_progress') ? 1 : 0,
    tool: options.tool ?? null,
    olderThanMs: options.olderThanMs ?? null,
    cursorUpdatedAtMs: cursor?.updatedAtMs ?? null,
    cursorTenant: cursor?.tenant ?? null,
    cursorKey: cursor?.key ?? null,
    // One more than asked for: whether a next page exists.
    limit: options.limit + 1,
  }) as RecordRow[];
  const records: ListedRecord[] = rows.slice(0, options.limit).map((row) => {
    const { outcome: _outcome, ...listed } = toRecord(row);
    return listed;
  });
  const last = records.at(-1);
  if (rows.length <= options.limit || last === undefined) return { records, nowMs: now };
  const position = { updatedAtMs: last.updatedAtMs ?? 0, tenant: last.tenant, key: last.key };
  return { records, cursor: encodeListCursor(position, order), nowMs: now };
}

interface JournalRow {
  readonly tenant: string;
  readonly key: string;
  readonly tool: string;
  readonly action: ResolutionEntry['action'];
  readonly from_state: ResolutionEntry['fromState'];
  readonly fence: number;
  readonly attempt: number;
  readonly error_type: string | null;
  readonly error_message: string | null;
  readonly resolved_by: string | null;
  readonly reason: string | null;
  readonly resolved_at_ms: number;
}

/** `resolutions` on SQLite, live at `now`, newest first. */
export function readResolutions(db: RecordsDatabase, ref: RecordRef, now: number): ResolutionEntry[] {
  const rows = db
    .statement('selectResolutions')
    .all({ tenant: ref.tenant, key: ref.key, now }) as JournalRow[];
  return rows.map((row) => ({
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    action: row.action,
    fromState: row.from_state,
    fence: row.fence,
    attempt: row.attempt,
    ...(row.error_type === null ? {} : { error: { type: row.error_type, message: row.error_message ?? '' } }),
    ...(row.resolved_by === null ? {} : { by: row.resolved_by }),
    ...(row.reason === null ? {} : { reason: row.reason }),
    atMs: row.resolved_at_ms,
  }));
}
