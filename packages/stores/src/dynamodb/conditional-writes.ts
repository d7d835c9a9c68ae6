// The conditional writes every decision of the DynamoDB store ends in. A write either lands as one
// step of DynamoDB, with every premise of the decision in its condition, or is refused and tells
// the caller the item that refused it, to decide again on it.
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { RecordRef } from '@toolfence/core/store';
import { assertItemSize, ConditionFailed, type Operation, type RecordsTable } from './backend.js';
import { type Item, type RecordItem, toItem } from './record-codec.js';

/** What a conditional write found: `written`, or the record item as it is now (undefined: none). */
export type WriteResult =
  | { readonly written: true }
  | {
      readonly written: false;
      readonly current: RecordItem | undefined;
      /**
       * The writer's clock just before the request whose answer `current` is (the refused write
       * when DynamoDB returned the item, else the read after it): the item was as `current` at
       * some moment after this, so a lease or retention that has ended by it has ended for the
       * decision too.
       */
      readonly seenAtMs: number;
    };

/**
 * What the write assumes of the item it replaces: `absent` (no item at all), `free` (no item, or
 * one past its retention with no pending resolution entry: the first try of a claim, before any
 * read) or the exact item read before (its version token).
 */
export type Premise = 'absent' | 'free' | RecordItem;

function premiseCondition(
  premise: Premise,
  now: number,
): { ConditionExpression: string; ExpressionAttributeValues?: Item } {
  if (premise === 'absent') return { ConditionExpression: 'attribute_not_exists(pk)' };
  if (premise === 'free') {
    return {
      ConditionExpression: 'attribute_not_exists(pk) OR (exp <= :now AND attribute_not_exists(pres))',
      ExpressionAttributeValues: { ':now': { N: String(now) } },
    };
  }
  return {
    ConditionExpression: 'ver = :ver',
    ExpressionAttributeValues: { ':ver': { S: premise.version } },
  };
}

/** Runs a conditional request; a refusal becomes `{ written: false, current }`. */
export async function conditionally(
  table: RecordsTable,
  op: Operation,
  ref: RecordRef,
  request: () => Promise<unknown>,
): Promise<WriteResult> {
  const sentAtMs = Date.now();
  try {
    await request();
    return { written: true };
  } catch (error) {
    if (!(error instanceof ConditionFailed)) throw error;
    const seenAtMs = error.item === undefined ? Date.now() : sentAtMs;
    return { written: false, current: await table.current(op, ref, error), seenAtMs };
  }
}

/** Replaces the record item with `next` if the item is still as `premise` says. */
export function putRecord(
  table: RecordsTable,
  op: Operation,
  next: RecordItem,
  premise: Premise,
  now: number,
): Promise<WriteResult> {
  const item = toItem(next);
  assertItemSize(item);
  return conditionally(table, op, next, () =>
    op.send(
      new PutItemCommand({
        TableName: table.tableName,
        Item: item,
        ...premiseCondition(premise, now),
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    ),
  );
}
