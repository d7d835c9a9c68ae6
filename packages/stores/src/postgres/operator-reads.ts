// The reads on PostgreSQL not as a holder: get (statements/get.sql), list (statements/list-*.sql:
// the primary key or a scan, no index a complete would change; for indeterminate and abandoned
// records only, the attention index, which a complete leaves alone), and a key's resolutions
// (statements/resolutions.sql).
// The journal is written by the resolve statements themselves (operator-writes.ts).
import type {
  IdempotencyRecord,
  ListOptions,
  ListPage,
  RecordRef,
  ResolutionEntry,
} from '@toolfence/core/store';
import { journalEntry, type ListQuery, listPage, listQuery } from '../shared/sql-listing.js';
import type { StatementRunner } from './backend.js';
import { type Row, toRecord } from './record-codec.js';

export async function getRecord(runner: StatementRunner, ref: RecordRef): Promise<IdempotencyRecord | null> {
  const row = await runner.queryOne('get', runner.sql.get, [ref.tenant, ref.key]);
  return row === undefined ? null : toRecord(row);
}

/**
 * The states every record of which has an error_type, so the attention index of
 * 0009_attention_index.sql holds them all (list-*-attention.sql).
 */
const attentionStates: ReadonlySet<string> = new Set(['indeterminate', 'abandoned']);

/** The parameters of statements/list-*.sql. */
export function listParameters(options: ListOptions, query: ListQuery): unknown[] {
  return [
    options.allTenants === true ? null : options.tenant,
    query.storedStates,
    query.expiredOnly,
    options.tool ?? null,
    options.olderThanMs ?? null,
    query.cursor?.updatedAtMs ?? null,
    query.cursor?.tenant ?? null,
    query.cursor?.key ?? null,
    query.rowLimit,
  ];
}

/** `list` on PostgreSQL, the options checked. @throws StoreInputError, StoreUnavailableError */
export async function listRecords(runner: StatementRunner, options: ListOptions): Promise<ListPage> {
  const query = listQuery(options);
  const attention = query.storedStates.every((state) => attentionStates.has(state));
  const text =
    query.order === 'oldest'
      ? attention
        ? runner.sql.listOldestAttention
        : runner.sql.listOldest
      : attention
        ? runner.sql.listNewestAttention
        : runner.sql.listNewest;
  const { rows } = await runner.query('list', text, listParameters(options, query));
  const typed = rows as Row[];
  // An empty page still tells the database clock.
  const clock = typed[0] ?? (await runner.queryOne('list', runner.sql.databaseNow, []));
  return listPage(typed, toRecord, query, Number(clock?.now_ms));
}

/** `resolutions` on PostgreSQL. @throws StoreUnavailableError */
export async function readResolutions(runner: StatementRunner, ref: RecordRef): Promise<ResolutionEntry[]> {
  const { rows } = await runner.query('resolutions', runner.sql.resolutions, [ref.tenant, ref.key]);
  return (rows as Row[]).map(journalEntry);
}
