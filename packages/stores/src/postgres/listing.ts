// [#20 listing] PostgresStore's operator side: list from the partial listing indexes
// (sql/list-*.sql), the resolution journal (sql/resolutions.sql), and the operator fields of a
// record row. The journal is written by the resolve statements themselves.
import {
  checkListOptions,
  checkRecordRef,
  decodeListCursor,
  encodeListCursor,
  type IdempotencyRecord,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  listedStates,
  type RecordRef,
  type ResolutionEntry,
} from '@toolfence/core';

/** A result row, as pg returns it. */
export type Row = Record<string, unknown>;

/** Runs one rendered statement (the store's own `query`, with its errors and deadlines). */
export type RunStatement = (
  operation: string,
  text: string,
  values: unknown[],
) => Promise<{ rows: unknown[] }>;

const DATABASE_NOW = 'SELECT floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms';

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

/** `list` on PostgreSQL. @throws StoreInputError, StoreUnavailableError */
export async function listPostgres(
  run: RunStatement,
  sql: { readonly listOldest: string; readonly listNewest: string },
  options: ListOptions,
  toRecord: (row: Row) => IdempotencyRecord,
): Promise<ListPage> {
  checkListOptions(options);
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const text = order === 'oldest' ? sql.listOldest : sql.listNewest;
  const { rows } = await run('list', text, listParameters(options, cursor));
  const typed = rows as Row[];
  // An empty page still tells the database clock.
  const clock = typed[0] ?? ((await run('list', DATABASE_NOW, [])).rows[0] as Row | undefined);
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

/** `resolutions` on PostgreSQL. @throws StoreInputError, StoreUnavailableError */
export async function resolutionsPostgres(
  run: RunStatement,
  text: string,
  ref: RecordRef,
): Promise<ResolutionEntry[]> {
  checkRecordRef(ref);
  const { rows } = await run('resolutions', text, [ref.tenant, ref.key]);
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

/** The operator fields of a record row that carries them (get, list); absent columns add nothing. */
export function operatorFieldsOf(row: Row): Partial<IdempotencyRecord> {
  const fields: { -readonly [K in keyof IdempotencyRecord]?: IdempotencyRecord[K] } = {};
  if (typeof row.run_id === 'string') fields.runId = row.run_id;
  if (typeof row.call_id === 'string') fields.callId = row.call_id;
  if (typeof row.description === 'string') fields.description = row.description;
  if (row.claimed_at_ms !== undefined && row.claimed_at_ms !== null)
    fields.claimedAtMs = Number(row.claimed_at_ms);
  if (row.updated_at_ms !== undefined && row.updated_at_ms !== null)
    fields.updatedAtMs = Number(row.updated_at_ms);
  if (row.resolution !== undefined && row.resolution !== null)
    fields.resolution = resolutionOf(row.resolution);
  return fields;
}

function resolutionOf(value: unknown): ResolutionEntry {
  const entry = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
  return {
    key: String(entry.key),
    tenant: String(entry.tenant),
    tool: String(entry.tool),
    action: entry.action as ResolutionEntry['action'],
    fromState: entry.fromState as ResolutionEntry['fromState'],
    fence: Number(entry.fence),
    attempt: Number(entry.attempt),
    ...(entry.error === undefined ? {} : { error: entry.error as ResolutionEntry['error'] }),
    ...(entry.by === undefined ? {} : { by: String(entry.by) }),
    ...(entry.reason === undefined ? {} : { reason: String(entry.reason) }),
    atMs: Number(entry.atMs),
  } as ResolutionEntry;
}
