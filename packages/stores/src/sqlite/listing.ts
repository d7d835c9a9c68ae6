// [#20 listing] SQLiteStore's operator side: list from the partial listing indexes
// (sql/list-*.sql), the resolution journal (written in the resolve transaction), and the operator
// fields of a record row.
import {
  type ClaimOptions,
  decodeListCursor,
  encodeListCursor,
  type IdempotencyRecord,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  listedStates,
  type RecordRef,
  type RecordState,
  type Resolution,
  type ResolutionEntry,
} from '@toolfence/core';
import type Database from 'better-sqlite3';

/** The operator columns of a record row. */
export interface OperatorColumns {
  readonly run_id: string | null;
  readonly call_id: string | null;
  readonly description: string | null;
  readonly claimed_at_ms: number | null;
  readonly updated_at_ms: number;
  readonly resolution: string | null;
}

/** What a claim records for operators: run_id, call_id, description (insert-record.sql order). */
export function callInfo(options: ClaimOptions): (string | null)[] {
  return [options.runId ?? null, options.callId ?? null, options.description ?? null];
}

/** The columns a takeover changes for operators: the new attempt's ids and times. */
export function takeoverInfo(options: ClaimOptions, now: number): Partial<OperatorColumns> {
  const [runId, callId, description] = callInfo(options);
  return {
    run_id: runId ?? null,
    call_id: callId ?? null,
    description: description ?? null,
    claimed_at_ms: now,
    updated_at_ms: now,
  };
}

/** The operator fields of a record row. */
export function operatorFieldsOf(row: OperatorColumns): Partial<IdempotencyRecord> {
  const fields: { -readonly [K in keyof IdempotencyRecord]?: IdempotencyRecord[K] } = {};
  if (row.run_id !== null) fields.runId = row.run_id;
  if (row.call_id !== null) fields.callId = row.call_id;
  if (row.description !== null) fields.description = row.description;
  if (row.claimed_at_ms !== null) fields.claimedAtMs = row.claimed_at_ms;
  fields.updatedAtMs = row.updated_at_ms;
  if (row.resolution !== null) fields.resolution = JSON.parse(row.resolution) as ResolutionEntry;
  return fields;
}

interface ResolvableRow {
  readonly tenant: string;
  readonly key: string;
  readonly tool: string;
  readonly state: RecordState;
  readonly fence: number;
  readonly attempt: number;
  readonly error_type: string | null;
  readonly error_message: string | null;
}

/** The resolution entry of resolving `row` now. */
export function resolutionEntryOf(row: ResolvableRow, resolution: Resolution, now: number): ResolutionEntry {
  return {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: row.state as ResolutionEntry['fromState'],
    fence: row.fence,
    attempt: row.attempt,
    ...(row.error_type === null ? {} : { error: { type: row.error_type, message: row.error_message ?? '' } }),
    ...(resolution.by === undefined ? {} : { by: resolution.by }),
    ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
    atMs: now,
  };
}

/** The values of insert-resolution.sql. */
export function journalRow(entry: ResolutionEntry, expiresAtMs: number): unknown[] {
  return [
    entry.tenant,
    entry.key,
    entry.tool,
    entry.action,
    entry.fromState,
    entry.fence,
    entry.attempt,
    entry.error?.type ?? null,
    entry.error?.message ?? null,
    entry.by ?? null,
    entry.reason ?? null,
    entry.atMs,
    expiresAtMs,
  ];
}

type Statement = (name: 'listOldest' | 'listNewest') => Database.Statement;

/** `list` on SQLite (options already checked): one autocommit SELECT. @throws StoreInputError */
export function listSqlite<Row>(
  statement: Statement,
  options: ListOptions,
  now: number,
  toRecord: (row: Row) => IdempotencyRecord,
): ListPage {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const stored = new Set<string>();
  for (const state of states) stored.add(state === 'lease_expired' ? 'in_progress' : state);
  const rows = statement(order === 'oldest' ? 'listOldest' : 'listNewest').all({
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
  }) as Row[];
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

/** `resolutions` on SQLite: one autocommit SELECT. */
export function resolutionsSqlite(
  statement: Database.Statement,
  ref: RecordRef,
  now: number,
): ResolutionEntry[] {
  return (statement.all({ tenant: ref.tenant, key: ref.key, now }) as JournalRow[]).map((row) => ({
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
