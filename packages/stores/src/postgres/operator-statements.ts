// The operator's reads on PostgreSQL: list, from the partial listing indexes (sql/list-*.sql),
// and a key's resolutions (sql/resolutions.sql). The journal is written by the resolve
// statements themselves (record-statements.ts).
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
import { type Row, toRecord } from './row-codec.js';
import type { StatementRunner } from './statement-runner.js';

/** The parameters of sql/list-*.sql. */
export function listParameters(
  options: ListOptions,
  cursor: ReturnType<typeof decodeListCursor> | undefined,
): unknown[] {
  const states = listedStates(options);
  const stored = new Set<string>();
  for (const state of states) stored.add(state === 'lease_expired' ? 'in_progress' : state);
  return [
    options.allTenants === true ? null : options.tenant,
    [...stored],
    states.has('lease_expired') && !states.has('in_progress'),
    options.tool ?? null,
    options.olderThanMs ?? null,
    cursor?.updatedAtMs ?? null,
    cursor?.tenant ?? null,
    cursor?.key ?? null,
    // One more than asked for: whether a next page exists.
    options.limit + 1,
  ];
}

/** `list` on PostgreSQL, the options checked. @throws StoreInputError, StoreUnavailableError */
export async function listRecords(runner: StatementRunner, options: ListOptions): Promise<ListPage> {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const text = order === 'oldest' ? runner.sql.listOldest : runner.sql.listNewest;
  const { rows } = await runner.query('list', text, listParameters(options, cursor));
  const typed = rows as Row[];
  // An empty page still tells the database clock.
  const clock = typed[0] ?? (await runner.queryOne('list', runner.sql.databaseNow, []));
  const nowMs = Number(clock?.now_ms);
  const records: ListedRecord[] = typed.slice(0, options.limit).map((row) => {
    const { outcome: _outcome, ...listed } = toRecord(row);
    return listed;
  });
  const last = records.at(-1);
  if (typed.length <= options.limit || last === undefined) return { records, nowMs };
  const position = { updatedAtMs: last.updatedAtMs ?? 0, tenant: last.tenant, key: last.key };
  return { records, cursor: encodeListCursor(position, order), nowMs };
}

/** `resolutions` on PostgreSQL. @throws StoreUnavailableError */
export async function readResolutions(runner: StatementRunner, ref: RecordRef): Promise<ResolutionEntry[]> {
  const { rows } = await runner.query('resolutions', runner.sql.resolutions, [ref.tenant, ref.key]);
  return (rows as Row[]).map((row) => ({
    key: String(row.key),
    tenant: String(row.tenant),
    tool: String(row.tool),
    action: row.action as ResolutionEntry['action'],
    fromState: row.from_state as ResolutionEntry['fromState'],
    fence: Number(row.fence),
    attempt: Number(row.attempt),
    ...(row.error_type === null
      ? {}
      : { error: { type: String(row.error_type), message: String(row.error_message ?? '') } }),
    ...(row.resolved_by === null ? {} : { by: String(row.resolved_by) }),
    ...(row.reason === null ? {} : { reason: String(row.reason) }),
    atMs: Number(row.resolved_at_ms),
  }));
}
