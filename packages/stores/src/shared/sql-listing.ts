// What the SQL stores (Postgres, SQLite) share to answer the operator's reads from their rows:
// the state filter and cursor a list statement takes (statements/list-*.sql), the page built from its
// rows, and a row of the resolutions journal as a ResolutionEntry. The listing rules themselves
// are core's (packages/core/src/store/list-cursor.ts, docs/store-contract.md "Listing").
import {
  decodeListCursor,
  encodeListCursor,
  type IdempotencyRecord,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  type ListPosition,
  listedStates,
  type ResolutionEntry,
} from '@toolfence/core/store';

/** What a list statement filters on besides the plain options. */
export interface ListQuery {
  readonly order: 'oldest' | 'newest';
  /** The position the previous page ended at; absent for the first page. */
  readonly cursor: ListPosition | undefined;
  /** The stored states to take (`lease_expired` is stored as `in_progress`). */
  readonly storedStates: readonly string[];
  /** In-progress records count only once their lease expired (`lease_expired` asked without `in_progress`). */
  readonly expiredOnly: boolean;
  /** The rows to fetch: one more than asked for, to tell whether a next page exists. */
  readonly rowLimit: number;
}

/** The {@link ListQuery} of checked `options`. @throws StoreInputError for a cursor not made for this order */
export function listQuery(options: ListOptions): ListQuery {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const stored = new Set<string>();
  for (const state of states) stored.add(state === 'lease_expired' ? 'in_progress' : state);
  const expiredOnly = states.has('lease_expired') && !states.has('in_progress');
  return { order, cursor, storedStates: [...stored], expiredOnly, rowLimit: options.limit + 1 };
}

/**
 * The page of a list statement's `rows` (at most `query.rowLimit`): the first `limit` as records
 * without their outcome, and a cursor after the last one when more rows followed.
 */
export function listPage<Row>(
  rows: readonly Row[],
  toRecord: (row: Row) => IdempotencyRecord,
  query: ListQuery,
  nowMs: number,
): ListPage {
  const limit = query.rowLimit - 1;
  const records: ListedRecord[] = rows.slice(0, limit).map((row) => {
    const { outcome: _outcome, ...listed } = toRecord(row);
    return listed;
  });
  const last = records.at(-1);
  if (rows.length <= limit || last === undefined) return { records, nowMs };
  const position = { updatedAtMs: last.updatedAtMs ?? 0, tenant: last.tenant, key: last.key };
  return { records, cursor: encodeListCursor(position, query.order), nowMs };
}

/**
 * A row of the resolutions journal (tenant, key, tool, action, from_state, fence, attempt,
 * error_type, error_message, resolved_by, reason, resolved_at_ms) as its entry.
 */
export function journalEntry(row: Readonly<Record<string, unknown>>): ResolutionEntry {
  return {
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
    // PostgreSQL answers a boolean, SQLite an integer.
    ...(row.forced === true || row.forced === 1 ? { forced: true as const } : {}),
  };
}
