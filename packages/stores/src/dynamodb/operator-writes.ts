// The operator's resolutions on DynamoDB. dynalite has no transactions (and a transaction would
// double the cost), so the one conditional write that decides a resolve also carries its entry,
// inside the record item (`pres`); the entry is then copied to an item of its own beside the
// record and removed from it. Whoever finds a pending entry (the resolver, a claim about to
// overwrite the item, a reader of `resolutions`) finishes the copy, so no entry is lost with
// the item it was written in.
import { DeleteItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type {
  RecordRef,
  RecordState,
  Resolution,
  ResolutionEntry,
  ResolveResult,
} from '@toolfence/core/store';
import {
  overridesLiveHolder,
  resolutionApplies,
  resolveDecision,
  StoreUnavailableError,
} from '@toolfence/core/store';
import {
  ConditionFailed,
  INLINE_OUTCOME_BYTES,
  newVersion,
  type Operation,
  type RecordsTable,
} from './backend.js';
import { putRecord } from './conditional-writes.js';
import {
  ENTRY_SK_PREFIX,
  type Item,
  isLive,
  type PendingEntry,
  partitionKey,
  RECORD_SK,
  type RecordItem,
  recordKey,
  TENANT_INDEX,
  toRecord,
  ttlOf,
} from './record-codec.js';

const MAX_ROUNDS = 16;

function entryOf(record: RecordItem, resolution: Resolution, now: number): ResolutionEntry {
  return {
    key: record.key,
    tenant: record.tenant,
    tool: record.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: record.state as ResolutionEntry['fromState'],
    fence: record.fence,
    attempt: record.attempt,
    ...(record.error === undefined ? {} : { error: record.error }),
    ...(resolution.by === undefined ? {} : { by: resolution.by }),
    ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
    ...(overridesLiveHolder(record as RecordItem & { state: RecordState }, now) ? { forced: true } : {}),
    atMs: now,
  };
}

/** Copies a pending entry to its own item, then removes it from the record item (a tombstone goes). */
export async function settlePending(table: RecordsTable, op: Operation, record: RecordItem): Promise<void> {
  const pending = record.pending;
  if (pending === undefined) return;
  await op.send(
    new PutItemCommand({
      TableName: table.tableName,
      Item: {
        pk: { S: partitionKey(record) },
        sk: { S: pending.sk },
        // In the tenant index (so that forget finds it), not in the all-tenants one.
        tenant: { S: record.tenant },
        upd: { N: String(pending.entry.atMs) },
        x: { N: String(pending.expiresAtMs) },
        entry: { S: JSON.stringify(pending.entry) },
        ttl: ttlOf(pending.expiresAtMs),
      },
    }),
  );
  // The version stays: a decision made on the item with its pending entry is still right on it
  // without (the entry lives on in its own item).
  const condition = {
    ConditionExpression: 'ver = :ver',
    ExpressionAttributeValues: { ':ver': { S: record.version } },
  };
  try {
    if (record.state === 'gone') {
      await op.send(
        new DeleteItemCommand({ TableName: table.tableName, Key: recordKey(record), ...condition }),
      );
    } else {
      await op.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: recordKey(record),
          UpdateExpression: 'REMOVE pres SET #ttl = :ttl',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ...condition,
          ExpressionAttributeValues: {
            ...condition.ExpressionAttributeValues,
            ':ttl': ttlOf(record.expiresAtMs),
          },
        }),
      );
    }
  } catch (error) {
    // Someone else moved on from this item (and copied the entry first): nothing left to do.
    if (!(error instanceof ConditionFailed)) throw error;
  }
}

/**
 * The operator's resolve: read, decide as the contract says, then one conditional write on the
 * version read (the record completed with its entry, or a tombstone holding the entry); decided
 * again on whatever refused it.
 */
export async function resolve(
  table: RecordsTable,
  op: Operation,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
): Promise<ResolveResult> {
  let current = await table.read(op, ref);
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const now = Date.now();
    if (!isLive(current, now)) return { status: 'not_found' };
    if (!resolutionApplies(toRecord(current), resolution))
      return { status: 'changed', record: toRecord(current) };
    // A completed record is settled; a live holder's body may still take effect:
    // judged on this store's clock (the writer's), as its claims judge leases.
    const decision = resolveDecision(current as RecordItem & { state: RecordState }, resolution, now);
    if (decision !== 'settle') return { status: decision, record: toRecord(current) };
    const entry = entryOf(current, resolution, now);
    const pending: PendingEntry = {
      sk: `${ENTRY_SK_PREFIX}${String(now).padStart(16, '0')}#${newVersion()}`,
      entry,
      expiresAtMs: now + retentionMs,
    };
    let next: RecordItem;
    if ('outcome' in resolution) {
      const { error: _error, outcome: _outcome, outcomeRef: _ref, ...rest } = current;
      next = {
        ...rest,
        state: 'completed',
        expiresAtMs: now + retentionMs,
        updatedAtMs: now,
        resolution: entry,
        pending,
        version: newVersion(),
      };
      if (Buffer.byteLength(resolution.outcome, 'utf8') > INLINE_OUTCOME_BYTES) {
        next.outcomeRef = await table.writeOutcome(op, resolution.outcome, next.expiresAtMs);
      } else {
        next.outcome = resolution.outcome;
      }
    } else {
      // A tombstone: past its retention at once (no record to anyone), kept for the entry only.
      next = {
        tenant: current.tenant,
        key: current.key,
        tool: current.tool,
        fingerprint: current.fingerprint,
        state: 'gone',
        fence: current.fence,
        attempt: current.attempt,
        owner: current.owner,
        leaseExpiresAtMs: now,
        expiresAtMs: now,
        retentionMs: current.retentionMs,
        updatedAtMs: now,
        pending,
        version: newVersion(),
      };
    }
    const written = await putRecord(table, op, next, current, now);
    if (written.written) {
      await settlePending(table, op, next);
      return { status: 'resolved' };
    }
    if (next.outcomeRef !== undefined) await table.deleteOutcome(op, next.outcomeRef);
    current = written.current;
  }
  return contention(op);
}

/** A decision that kept losing its conditional write: no answer could be decided (an outage to the caller). */
export function contention(op: Operation): never {
  throw new StoreUnavailableError(
    op.name,
    `the record changed ${MAX_ROUNDS} times while the store decided on it`,
  );
}

/**
 * Deletes every item of `tenant` (records, tombstones, resolution entries, outcome chunks) and
 * answers how many live records it deleted. Found through the tenant index (exact equality of the
 * tenant: never a prefix); a record item is deleted only as it was read (its version), so one
 * claimed afresh meanwhile survives.
 */
export async function forgetTenant(table: RecordsTable, op: Operation, tenant: string): Promise<number> {
  const now = Date.now();
  const partitions = new Set<string>();
  for await (const entry of table.query(op, {
    TableName: table.tableName,
    IndexName: TENANT_INDEX,
    KeyConditionExpression: 'tenant = :t',
    ExpressionAttributeValues: { ':t': { S: tenant } },
  })) {
    const pk = entry.pk?.S;
    if (pk !== undefined) partitions.add(pk);
  }
  let deleted = 0;
  for (const pk of partitions) {
    const items: Item[] = [];
    for await (const item of table.query(op, {
      TableName: table.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: pk } },
      ProjectionExpression: 'pk, sk, st, exp, ver, outRef',
      ConsistentRead: true,
    })) {
      items.push(item);
    }
    // The record first, on the version read: a key claimed afresh meanwhile survives (and its
    // outcome chunks with it); its resolution entries go either way.
    const record = items.find((item) => item.sk?.S === RECORD_SK);
    if (record !== undefined) {
      try {
        await op.send(
          new DeleteItemCommand({
            TableName: table.tableName,
            Key: { pk: record.pk as Item[string], sk: record.sk as Item[string] },
            ConditionExpression: 'ver = :ver',
            ExpressionAttributeValues: { ':ver': record.ver as Item[string] },
          }),
        );
        if (record.st?.S !== 'gone' && Number(record.exp?.N) > now) deleted++;
        const outRef = record.outRef?.M;
        if (outRef?.id?.S !== undefined) {
          await table.deleteOutcome(op, { id: outRef.id.S, chunks: Number(outRef.n?.N ?? 0) });
        }
      } catch (error) {
        if (!(error instanceof ConditionFailed)) throw error;
      }
    }
    const rest = items.filter((item) => item !== record);
    await table.batchWrite(
      op,
      rest.map((item) => ({ DeleteRequest: { Key: { pk: item.pk, sk: item.sk } } })),
    );
  }
  return deleted;
}
