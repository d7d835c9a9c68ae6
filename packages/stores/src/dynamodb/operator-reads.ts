// The operator's reads on DynamoDB. list goes through the two global secondary indexes the table
// has (docs/dynamodb.md, "Indexes"): `byTenant` (tenant, updatedAtMs) for a tenant's records (and
// for forget, operator-writes.ts), `byShard` (one of LIST_SHARDS shards, updatedAtMs) for every tenant's. DynamoDB keeps
// both in the same write that changes a record; they project only the keys, the state and the
// tool, so a renewal (which changes neither) writes no index entry. Index reads are eventually
// consistent: every candidate is read again from the table (strongly consistent) before it is
// listed, and listed only where it now is.
import type { ListedRecord, ListOptions, ListPage, RecordRef, ResolutionEntry } from '@toolfence/core/store';
import {
  afterCursor,
  compareListPositions,
  decodeListCursor,
  encodeListCursor,
  type ListPosition,
  listedRecordOf,
  listedStates,
  recordMatches,
} from '@toolfence/core/store';
import type { Operation, RecordsTable } from './backend.js';
import {
  ENTRY_SK_PREFIX,
  fromItem,
  type Item,
  isLive,
  LIST_SHARDS,
  partitionKey,
  RECORD_SK,
  SHARD_INDEX,
  TENANT_INDEX,
  toRecord,
} from './record-codec.js';

function positionOf(record: ListedRecord): ListPosition {
  return { updatedAtMs: record.updatedAtMs ?? 0, tenant: record.tenant, key: record.key };
}

/** Whether an index entry (state and tool projected) may belong on the page. */
function mayMatch(entry: Item, options: ListOptions, states: ReadonlySet<string>): boolean {
  if (entry.sk?.S !== RECORD_SK) return false; // a resolution entry, in the tenant index for forget
  const state = entry.st?.S;
  if (options.tool !== undefined && entry.tool?.S !== options.tool) return false;
  if (state === 'in_progress') return states.has('in_progress') || states.has('lease_expired');
  return state !== undefined && states.has(state);
}

/**
 * One index partition's records of the page: read in page order from the cursor's time on, each
 * candidate confirmed on the table, until `limit + 1` matched and no more share the time of the
 * last one (records of one time are ordered by tenant and key here, not by the index).
 */
async function listPartition(
  table: RecordsTable,
  op: Operation,
  index: string,
  partition: { name: string; value: string },
  options: ListOptions,
  now: number,
): Promise<ListedRecord[]> {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  const states = listedStates(options);
  const values: Item = { ':p': { S: partition.value } };
  let condition = `${partition.name} = :p`;
  if (cursor !== undefined) {
    condition += order === 'oldest' ? ' AND upd >= :c' : ' AND upd <= :c';
    values[':c'] = { N: String(cursor.updatedAtMs) };
  }
  const matched: ListedRecord[] = [];
  let batch: Item[] = [];
  let lastTime: number | undefined;
  const confirm = async (): Promise<void> => {
    if (batch.length === 0) return;
    const keys = batch.map((entry) => ({ pk: entry.pk as Item[string], sk: entry.sk as Item[string] }));
    const indexed = new Map(batch.map((entry) => [entry.pk?.S, Number(entry.upd?.N)]));
    batch = [];
    for (const item of await table.batchGet(op, keys)) {
      const record = fromItem(item);
      if (!isLive(record, now)) continue;
      // Moved since the index was read (an eventually consistent index): it is listed where it is now.
      if (indexed.get(item.pk?.S) !== record.updatedAtMs) continue;
      const full = toRecord(record);
      if (!recordMatches(full, options, states, now)) continue;
      const listed = listedRecordOf(full);
      if (afterCursor(positionOf(listed), cursor, order)) matched.push(listed);
    }
  };
  for await (const entry of table.query(op, {
    TableName: table.tableName,
    IndexName: index,
    KeyConditionExpression: condition,
    ExpressionAttributeValues: values,
    ScanIndexForward: order === 'oldest',
  })) {
    const time = Number(entry.upd?.N);
    if (time !== lastTime) {
      await confirm();
      if (matched.length > options.limit) break;
      lastTime = time;
    }
    if (mayMatch(entry, options, states)) batch.push(entry);
    if (batch.length >= 100) await confirm();
  }
  await confirm();
  return matched;
}

/** A page of `list` (docs/store-contract.md, "list"). */
export async function listRecords(
  table: RecordsTable,
  op: Operation,
  options: ListOptions,
): Promise<ListPage> {
  const now = Date.now();
  const order = options.order ?? 'oldest';
  const partitions =
    options.allTenants === true
      ? Array.from({ length: LIST_SHARDS }, (_, i) => ({ index: SHARD_INDEX, name: 'lsh', value: String(i) }))
      : [{ index: TENANT_INDEX, name: 'tenant', value: options.tenant as string }];
  const parts = await Promise.all(
    partitions.map((p) => listPartition(table, op, p.index, { name: p.name, value: p.value }, options, now)),
  );
  const matching = parts.flat();
  matching.sort((a, b) => compareListPositions(positionOf(a), positionOf(b)));
  if (order === 'newest') matching.reverse();
  const records = matching.slice(0, options.limit);
  const last = records.at(-1);
  const more = matching.length > options.limit && last !== undefined;
  return more
    ? { records, cursor: encodeListCursor(positionOf(last), order), nowMs: now }
    : { records, nowMs: now };
}

/** The live resolution entries of a key, newest first (pending ones included). */
export async function readResolutions(
  table: RecordsTable,
  op: Operation,
  ref: RecordRef,
): Promise<ResolutionEntry[]> {
  const found: { sk: string; entry: ResolutionEntry }[] = [];
  const seen = new Set<string>();
  for await (const item of table.query(op, {
    TableName: table.tableName,
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': { S: partitionKey(ref) }, ':prefix': { S: ENTRY_SK_PREFIX } },
    ConsistentRead: true,
  })) {
    const sk = item.sk?.S ?? '';
    seen.add(sk);
    if (Number(item.x?.N ?? 0) <= Date.now()) continue;
    found.push({ sk, entry: JSON.parse(item.entry?.S ?? '{}') as ResolutionEntry });
  }
  const record = await table.read(op, ref, false);
  const pending = record?.pending;
  if (pending !== undefined && !seen.has(pending.sk) && pending.expiresAtMs > Date.now()) {
    found.push({ sk: pending.sk, entry: pending.entry });
  }
  // Entry sort keys start with the zero-padded time: newest first is descending sort key order.
  found.sort((a, b) => (a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0));
  return found.map((item) => item.entry);
}
