// The items of the DynamoDB table (docs/dynamodb.md, "Table"): one record item per (tenant, key),
// its resolution entries beside it, and the chunks of outcomes too large to keep inline; and the
// codec between a record item and the contract's record.
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type {
  ApprovalEntry,
  IdempotencyRecord,
  RecordedError,
  RecordRef,
  RecordState,
  ResolutionEntry,
} from '@toolfence/core/store';

export type Item = Record<string, AttributeValue>;

/** The sort key of a record item; its resolution entries sort under `e#` beside it. */
export const RECORD_SK = 'r';
export const ENTRY_SK_PREFIX = 'e#';

/**
 * The key of chunk `index` of a long outcome: a partition of its own (`c#<id>#<index>`, never a
 * record's: those start with a digit), so a 16 MB outcome's 48 chunks spread over DynamoDB's
 * partitions instead of meeting one partition's write limit (1,000 WRU/s).
 */
export function chunkKey(id: string, index: number): Item {
  return { pk: { S: `c#${id}#${index}` }, sk: { S: 'c' } };
}

/** Shards of the `byShard` index, the one `list({ allTenants: true })` reads (docs/dynamodb.md). */
export const LIST_SHARDS = 8;

/** The table's global secondary indexes (docs/dynamodb.md, "Indexes"). */
export const TENANT_INDEX = 'byTenant';
export const SHARD_INDEX = 'byShard';

/**
 * A record resolved by an operator whose resolution entry is not yet its own item: the resolve
 * wrote it into the record item, in the same conditional write as the decision; the resolver (or
 * any claim that is about to overwrite the item) copies it to an entry item, then removes it.
 */
export interface PendingEntry {
  readonly sk: string;
  readonly entry: ResolutionEntry;
  readonly expiresAtMs: number;
}

/** Where an outcome too large for the record item lives: `chunks` chunk items under `id`. */
export interface OutcomeRef {
  readonly id: string;
  readonly chunks: number;
}

/**
 * A record item, decoded. `state: 'gone'` is a released resolution's tombstone: it reads as no
 * record and exists only until its pending entry is copied out. `outcome` is filled in by the
 * reader from the chunks when `outcomeRef` is set.
 */
export interface RecordItem {
  tenant: string;
  key: string;
  tool: string;
  fingerprint: string;
  state: RecordState | 'gone';
  fence: number;
  attempt: number;
  owner: string;
  leaseExpiresAtMs: number;
  expiresAtMs: number;
  /** The retention the claim of this attempt gave: a renewal keeps `expiresAtMs >= lease + it`. */
  retentionMs: number;
  updatedAtMs: number;
  claimedAtMs?: number;
  runId?: string;
  callId?: string;
  description?: string;
  /** The codec of the guard whose claim started this life (`IdempotencyRecord.codec`); a takeover keeps it. */
  codec?: string;
  outcome?: string;
  outcomeRef?: OutcomeRef;
  error?: RecordedError;
  resolution?: ResolutionEntry;
  /** The operator's decision on the call (approvals.ts): on approved and denied items, kept by the claim that consumed it. */
  approval?: ApprovalEntry;
  pending?: PendingEntry;
  /**
   * A fresh random token on every write: the condition of every write that was decided on a read
   * of the item (a counter could repeat when a new life starts over an expired item).
   */
  version: string;
}

/**
 * The partition key of a record: the tenant's length, the tenant, then the key. The length makes
 * the split unambiguous for any names (NUL is refused in names anyway). At most 3 bytes per code
 * unit, so 256 + 256 code units stay below DynamoDB's 2048-byte partition key limit.
 */
export function partitionKey(ref: RecordRef): string {
  return `${ref.tenant.length}/${ref.tenant}/${ref.key}`;
}

export function recordKey(ref: RecordRef): Item {
  return { pk: { S: partitionKey(ref) }, sk: { S: RECORD_SK } };
}

/** The shard of a record in the `byShard` index (FNV-1a of its partition key). */
export function shardOf(pk: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pk.length; i++) {
    hash ^= pk.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return String(hash % LIST_SHARDS);
}

/**
 * DynamoDB's TTL attribute, in whole seconds: rounded up, so TTL never deletes an item before
 * its deadline (it deletes late, up to days: readers judge `expiresAtMs` themselves).
 */
export function ttlOf(expiresAtMs: number): AttributeValue {
  return { N: String(Math.ceil(expiresAtMs / 1000)) };
}

const n = (value: number): AttributeValue => ({ N: String(value) });
const s = (value: string): AttributeValue => ({ S: value });

/** The full record item (every CAS write replaces the whole item). */
export function toItem(record: RecordItem): Item {
  const pk = partitionKey(record);
  const item: Item = {
    pk: s(pk),
    sk: s(RECORD_SK),
    tenant: s(record.tenant),
    rkey: s(record.key),
    st: s(record.state),
    fence: n(record.fence),
    att: n(record.attempt),
    tool: s(record.tool),
    fp: s(record.fingerprint),
    lease: n(record.leaseExpiresAtMs),
    exp: n(record.expiresAtMs),
    ret: n(record.retentionMs),
    retS: n(Math.ceil(record.retentionMs / 1000)),
    upd: n(record.updatedAtMs),
    ver: s(record.version),
    ttl: ttlOf(Math.max(record.expiresAtMs, record.pending?.expiresAtMs ?? 0)),
  };
  // A tombstone stays out of the all-tenants index (it is no record); the tenant index keeps it
  // so that `forget` finds it.
  if (record.state !== 'gone') item.lsh = s(shardOf(pk));
  // A decision made before any call asked has no owner; the attribute is left out (read as '').
  if (record.owner !== '') item.owner = s(record.owner);
  if (record.claimedAtMs !== undefined) item.clm = n(record.claimedAtMs);
  if (record.runId !== undefined) item.runId = s(record.runId);
  if (record.callId !== undefined) item.callId = s(record.callId);
  if (record.description !== undefined) item.dsc = s(record.description);
  if (record.codec !== undefined) item.cdc = s(record.codec);
  if (record.outcomeRef !== undefined) {
    item.outRef = { M: { id: s(record.outcomeRef.id), n: n(record.outcomeRef.chunks) } };
  } else if (record.outcome !== undefined) {
    item.out = s(record.outcome);
  }
  if (record.error !== undefined) {
    item.errT = s(record.error.type);
    item.errM = s(record.error.message);
  }
  if (record.resolution !== undefined) item.res = s(JSON.stringify(record.resolution));
  if (record.approval !== undefined) item.apr = s(JSON.stringify(record.approval));
  if (record.pending !== undefined) item.pres = s(JSON.stringify(record.pending));
  return item;
}

function str(item: Item, name: string): string | undefined {
  return item[name]?.S;
}

function num(item: Item, name: string): number | undefined {
  const value = item[name]?.N;
  return value === undefined ? undefined : Number(value);
}

function need<T>(value: T | undefined, name: string): T {
  if (value === undefined) throw new TypeError(`the record item has no attribute ${name}`);
  return value;
}

/** Decodes a record item; the outcome of a chunked record is read separately. */
export function fromItem(item: Item): RecordItem {
  const record: RecordItem = {
    tenant: need(str(item, 'tenant'), 'tenant'),
    key: need(str(item, 'rkey'), 'rkey'),
    tool: str(item, 'tool') ?? '',
    fingerprint: str(item, 'fp') ?? '',
    state: need(str(item, 'st'), 'st') as RecordItem['state'],
    fence: num(item, 'fence') ?? 0,
    attempt: num(item, 'att') ?? 0,
    owner: str(item, 'owner') ?? '',
    leaseExpiresAtMs: num(item, 'lease') ?? 0,
    expiresAtMs: need(num(item, 'exp'), 'exp'),
    retentionMs: num(item, 'ret') ?? 0,
    updatedAtMs: num(item, 'upd') ?? 0,
    version: need(str(item, 'ver'), 'ver'),
  };
  const claimedAtMs = num(item, 'clm');
  if (claimedAtMs !== undefined) record.claimedAtMs = claimedAtMs;
  const runId = str(item, 'runId');
  if (runId !== undefined) record.runId = runId;
  const callId = str(item, 'callId');
  if (callId !== undefined) record.callId = callId;
  const description = str(item, 'dsc');
  if (description !== undefined) record.description = description;
  const codec = str(item, 'cdc');
  if (codec !== undefined) record.codec = codec;
  const outRef = item.outRef?.M;
  if (outRef !== undefined) {
    record.outcomeRef = {
      id: need(outRef.id?.S, 'outRef.id'),
      chunks: Number(need(outRef.n?.N, 'outRef.n')),
    };
  } else {
    const outcome = str(item, 'out');
    if (outcome !== undefined) record.outcome = outcome;
  }
  const errorType = str(item, 'errT');
  if (errorType !== undefined) record.error = { type: errorType, message: str(item, 'errM') ?? '' };
  const resolution = str(item, 'res');
  if (resolution !== undefined) record.resolution = JSON.parse(resolution) as ResolutionEntry;
  const approval = str(item, 'apr');
  if (approval !== undefined) record.approval = JSON.parse(approval) as ApprovalEntry;
  const pending = str(item, 'pres');
  if (pending !== undefined) record.pending = JSON.parse(pending) as PendingEntry;
  return record;
}

/** Whether the item is a record on the writer's clock `now` (not past retention, not a tombstone). */
export function isLive(record: RecordItem | undefined, now: number): record is RecordItem {
  return record !== undefined && record.state !== 'gone' && record.expiresAtMs > now;
}

/** The contract's record of a live item (its outcome already read). */
export function toRecord(record: RecordItem): IdempotencyRecord {
  const out: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    fingerprint: record.fingerprint,
    state: record.state as RecordState,
    fence: record.fence,
    attempt: record.attempt,
    owner: record.owner,
    leaseExpiresAtMs: record.leaseExpiresAtMs,
    expiresAtMs: record.expiresAtMs,
    updatedAtMs: record.updatedAtMs,
  };
  if (record.outcome !== undefined) out.outcome = record.outcome;
  if (record.error !== undefined) out.error = record.error;
  if (record.runId !== undefined) out.runId = record.runId;
  if (record.callId !== undefined) out.callId = record.callId;
  if (record.description !== undefined) out.description = record.description;
  if (record.codec !== undefined) out.codec = record.codec;
  // The retention the call was claimed with: operators keep it.
  if (record.retentionMs > 0) out.retentionMs = record.retentionMs;
  if (record.claimedAtMs !== undefined) out.claimedAtMs = record.claimedAtMs;
  if (record.resolution !== undefined) out.resolution = record.resolution;
  if (record.approval !== undefined) out.approval = record.approval;
  return out;
}
