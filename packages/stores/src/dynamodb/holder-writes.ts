// The holder's operations on DynamoDB (renew, complete, release, markIndeterminate): each is ONE
// conditional write whose condition holds the whole decision: the fence AND the owner of the
// holder, the state, and the record's retention on the writer's clock. A refused write is
// answered from the item that refused it (or, on dynalite, a read right after: should that read
// show a record the write would now pass, the write is tried again).
import { DeleteItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type * as contract from '@toolfence/core/store';
import {
  assertItemSize,
  INLINE_OUTCOME_BYTES,
  newVersion,
  type Operation,
  type RecordsTable,
} from './backend.js';
import { conditionally } from './conditional-writes.js';
import { contention } from './operator-writes.js';
import { type Item, isLive, type RecordItem, recordKey, toRecord, ttlOf } from './record-codec.js';

const MAX_ROUNDS = 16;

const n = (value: number) => ({ N: String(value) });
const s = (value: string) => ({ S: value });

/** The holder condition: fence, owner, one of `states`, and not past retention at `now`. */
function holderCondition(holder: contract.Holder, states: readonly string[], now: number) {
  const names = states.map((_, i) => `:st${i}`);
  const values: Item = {
    ':fence': n(holder.fence),
    ':owner': s(holder.owner),
    ':now': n(now),
  };
  states.forEach((state, i) => {
    values[`:st${i}`] = s(state);
  });
  return {
    ConditionExpression: `fence = :fence AND #owner = :owner AND st IN (${names.join(', ')}) AND exp > :now`,
    names: { '#owner': 'owner' } as Record<string, string>,
    values,
  };
}

function isHolder(record: RecordItem, holder: contract.Holder): boolean {
  return record.fence === holder.fence && record.owner === holder.owner;
}

/**
 * Sends `write` (made for the writer's clock `now`) until it lands or the item that refused it
 * gives the answer (`answer` returns undefined when the write would now pass: try again).
 */
async function decideByWrite<T>(
  table: RecordsTable,
  op: Operation,
  ref: contract.RecordRef,
  write: (now: number) => Promise<unknown>,
  written: T,
  answer: (current: RecordItem | undefined, now: number) => T | undefined,
): Promise<T> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await conditionally(table, op, ref, () => write(Date.now()));
    if (result.written) return written;
    const decided = answer(result.current, result.seenAtMs);
    if (decided !== undefined) return decided;
  }
  return contention(op);
}

export function renew(
  table: RecordsTable,
  op: Operation,
  ref: contract.RecordRef,
  holder: contract.Holder,
  leaseMs: number,
): Promise<contract.RenewResult> {
  let leaseExpiresAtMs = 0;
  return decideByWrite<contract.RenewResult>(
    table,
    op,
    ref,
    (now) => {
      leaseExpiresAtMs = now + leaseMs;
      const condition = holderCondition(holder, ['in_progress'], now);
      // The claim's retention is on the item (`ret`, `retS` in seconds), so the new retention
      // deadline is computed by DynamoDB in the same write: lease + retention.
      return op.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: recordKey(ref),
          UpdateExpression: 'SET lease = :lease, exp = ret + :lease, #ttl = retS + :leaseS, ver = :ver',
          ConditionExpression: condition.ConditionExpression,
          ExpressionAttributeNames: { ...condition.names, '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ...condition.values,
            ':lease': n(leaseExpiresAtMs),
            ':leaseS': ttlOf(leaseExpiresAtMs),
            ':ver': s(newVersion()),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    { status: 'renewed', leaseExpiresAtMs: 0 },
    (current, now) => {
      if (!isLive(current, now)) return { status: 'lost', reason: 'not_found' };
      if (!isHolder(current, holder)) return { status: 'lost', reason: 'stale' };
      if (current.state !== 'in_progress') return { status: 'lost', reason: 'settled' };
      return undefined;
    },
  ).then((result) => (result.status === 'renewed' ? { status: 'renewed', leaseExpiresAtMs } : result));
}

export async function complete(
  table: RecordsTable,
  op: Operation,
  ref: contract.RecordRef,
  holder: contract.Holder,
  outcome: string,
  retentionMs: number,
): Promise<contract.CompleteResult> {
  // A long outcome goes to chunk items first; the complete points to them in its one write.
  const large = Buffer.byteLength(outcome, 'utf8') > INLINE_OUTCOME_BYTES;
  const outcomeRef = large ? await table.writeOutcome(op, outcome, Date.now() + retentionMs) : undefined;
  const result = await decideByWrite<contract.CompleteResult>(
    table,
    op,
    ref,
    (now) => {
      const condition = holderCondition(holder, ['in_progress', 'indeterminate', 'abandoned'], now);
      const values: Item = {
        ...condition.values,
        ':done': s('completed'),
        ':exp': n(now + retentionMs),
        ':ttl': ttlOf(now + retentionMs),
        ':upd': n(now),
        ':ver': s(newVersion()),
      };
      let set = 'st = :done, exp = :exp, #ttl = :ttl, upd = :upd, ver = :ver';
      if (outcomeRef === undefined) {
        values[':out'] = s(outcome);
        set += ', #out = :out';
      } else {
        values[':ref'] = { M: { id: s(outcomeRef.id), n: n(outcomeRef.chunks) } };
        set += ', outRef = :ref';
      }
      assertItemSize(values);
      return op.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: recordKey(ref),
          UpdateExpression: `SET ${set} REMOVE errT, errM${outcomeRef === undefined ? ', outRef' : ', #out'}`,
          ConditionExpression: condition.ConditionExpression,
          ExpressionAttributeNames: { ...condition.names, '#ttl': 'ttl', '#out': 'out' },
          ExpressionAttributeValues: values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    { status: 'completed' },
    (current, now) => {
      if (!isLive(current, now)) return { status: 'not_found' };
      if (!isHolder(current, holder) || current.state === 'completed') {
        return { status: 'stale', record: toRecord(current) };
      }
      return undefined;
    },
  );
  if (result.status !== 'completed' && outcomeRef !== undefined) await table.deleteOutcome(op, outcomeRef);
  return result;
}

export function release(
  table: RecordsTable,
  op: Operation,
  ref: contract.RecordRef,
  holder: contract.Holder,
): Promise<contract.ReleaseResult> {
  return decideByWrite<contract.ReleaseResult>(
    table,
    op,
    ref,
    (now) => {
      const condition = holderCondition(holder, ['in_progress'], now);
      return op.send(
        new DeleteItemCommand({
          TableName: table.tableName,
          Key: recordKey(ref),
          ConditionExpression: condition.ConditionExpression,
          ExpressionAttributeNames: condition.names,
          ExpressionAttributeValues: condition.values,
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    { status: 'released' },
    (current, now) => {
      if (!isLive(current, now)) return { status: 'not_found' };
      if (!isHolder(current, holder) || current.state !== 'in_progress') {
        return { status: 'stale', record: toRecord(current) };
      }
      return undefined;
    },
  );
}

export function markIndeterminate(
  table: RecordsTable,
  op: Operation,
  ref: contract.RecordRef,
  holder: contract.Holder,
  error: contract.RecordedError,
  retentionMs: number,
): Promise<contract.MarkIndeterminateResult> {
  return decideByWrite<contract.MarkIndeterminateResult>(
    table,
    op,
    ref,
    (now) => {
      const condition = holderCondition(holder, ['in_progress'], now);
      return op.send(
        new UpdateItemCommand({
          TableName: table.tableName,
          Key: recordKey(ref),
          UpdateExpression:
            'SET st = :ind, errT = :errT, errM = :errM, exp = :exp, #ttl = :ttl, upd = :upd, ver = :ver',
          ConditionExpression: condition.ConditionExpression,
          ExpressionAttributeNames: { ...condition.names, '#ttl': 'ttl' },
          ExpressionAttributeValues: {
            ...condition.values,
            ':ind': s('indeterminate'),
            ':errT': s(error.type),
            ':errM': s(error.message),
            ':exp': n(now + retentionMs),
            ':ttl': ttlOf(now + retentionMs),
            ':upd': n(now),
            ':ver': s(newVersion()),
          },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    },
    { status: 'marked' },
    (current, now) => {
      if (!isLive(current, now)) return { status: 'not_found' };
      if (!isHolder(current, holder) || current.state !== 'in_progress') {
        return { status: 'stale', record: toRecord(current) };
      }
      return undefined;
    },
  );
}
