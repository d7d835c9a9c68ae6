// The DynamoDB table as the store uses it: every request of one operation under that operation's
// deadline (rule S5: the SDK's retries inside it), conditional writes that report the item that
// refused them, and the reads of records with their outcome chunks.
import { randomUUID } from 'node:crypto';
import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  type DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import type { RecordRef } from '@toolfence/core/store';
import { StoreInputError, StoreUnavailableError } from '@toolfence/core/store';
import { toStoreError } from './errors.js';
import type { DynamoSettings } from './options.js';
import {
  chunkKey,
  fromItem,
  type Item,
  type OutcomeRef,
  type RecordItem,
  recordKey,
  ttlOf,
} from './record-codec.js';

/** DynamoDB's item size limit (400 KB, attribute names included). */
export const MAX_ITEM_BYTES = 400 * 1024;
/** Outcomes up to this many UTF-8 bytes stay in the record item; longer ones go to chunk items. */
export const INLINE_OUTCOME_BYTES = 64 * 1024;
/** Bytes of one outcome chunk item (well below the item limit, with room for its keys). */
const CHUNK_BYTES = 350 * 1024;
/**
 * Chunks outlive the record that points to them by this much (their TTL is set before the
 * record's final deadline is computed; DynamoDB deletes late anyway).
 */
const CHUNK_TTL_SLACK_MS = 3_600_000;

/** A conditional write was refused; `item` is the item as the condition saw it, when DynamoDB said. */
export class ConditionFailed extends Error {
  constructor(readonly item: Item | undefined) {
    super('ConditionalCheckFailedException');
  }
}

/** Sends each request with the operation's abort signal; failures become the contract's errors. */
export interface Operation {
  readonly name: string;
  send<T>(command: { readonly input: unknown }): Promise<T>;
}

type Sendable = Parameters<DynamoDBClient['send']>[0];

function sizeOf(value: unknown): number {
  // A close upper bound of DynamoDB's item size: names plus UTF-8 or byte lengths of the values.
  if (value === null || value === undefined) return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (value instanceof Uint8Array) return value.byteLength;
  if (typeof value === 'object') {
    let total = 0;
    for (const [name, inner] of Object.entries(value as Record<string, unknown>)) {
      total += Buffer.byteLength(name, 'utf8') + sizeOf(inner);
    }
    return total;
  }
  return 8;
}

/**
 * @throws StoreInputError when the item would exceed DynamoDB's 400 KB: checked before the write,
 *   so nothing is written.
 */
export function assertItemSize(item: Item): void {
  const size = sizeOf(item);
  if (size > MAX_ITEM_BYTES) {
    throw new StoreInputError(
      'record',
      `its item would be ${size} bytes, above DynamoDB's ${MAX_ITEM_BYTES}`,
    );
  }
}

export class RecordsTable {
  readonly tableName: string;
  readonly address: string;
  readonly operationTimeoutMs: number;
  readonly maxPollIntervalMs: number;
  private readonly client: DynamoDBClient;
  private readonly ownsClient: boolean;
  private readonly running = new Set<AbortController>();
  private closed = false;

  constructor(settings: DynamoSettings) {
    this.client = settings.client;
    this.ownsClient = settings.ownsClient;
    this.tableName = settings.tableName;
    this.address = settings.address;
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.maxPollIntervalMs = settings.maxPollIntervalMs;
  }

  /**
   * Runs `body` as operation `name` within `timeoutMs` (default the store's deadline): at the
   * deadline its request in flight is aborted and the operation rejects with
   * StoreUnavailableError, whatever the SDK is doing (retrying, waiting for a socket).
   */
  async run<T>(
    name: string,
    body: (op: Operation) => Promise<T>,
    timeoutMs = this.operationTimeoutMs,
  ): Promise<T> {
    this.assertOpen(name);
    const controller = new AbortController();
    this.running.add(controller);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new StoreUnavailableError(
          name,
          `${this.address} did not answer within ${timeoutMs} ms`,
        );
        controller.abort(error);
        reject(error);
      }, timeoutMs);
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true });
    });
    const op: Operation = {
      name,
      send: async <R>(command: { readonly input: unknown }): Promise<R> => {
        if (controller.signal.aborted) throw controller.signal.reason;
        try {
          return (await this.client.send(command as Sendable, { abortSignal: controller.signal })) as R;
        } catch (error) {
          if (controller.signal.aborted) throw controller.signal.reason;
          if ((error as { name?: unknown } | null)?.name === 'ConditionalCheckFailedException') {
            throw new ConditionFailed((error as { Item?: Item }).Item);
          }
          throw toStoreError(name, error, this.address);
        }
      },
    };
    try {
      return await Promise.race([body(op), deadline]);
    } finally {
      clearTimeout(timer);
      this.running.delete(controller);
    }
  }

  assertOpen(name: string): void {
    if (this.closed) throw new StoreUnavailableError(name, `the store of ${this.address} is closed`);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const controller of this.running) {
      controller.abort(new StoreUnavailableError('close', `the store of ${this.address} was closed`));
    }
    if (this.ownsClient) this.client.destroy();
  }

  /** The record item under `ref` (a strongly consistent read), with its outcome, or undefined. */
  async read(op: Operation, ref: RecordRef, withOutcome = true): Promise<RecordItem | undefined> {
    const answer = await op.send<{ Item?: Item }>(
      new GetItemCommand({ TableName: this.tableName, Key: recordKey(ref), ConsistentRead: true }),
    );
    return answer.Item === undefined ? undefined : this.decode(op, answer.Item, withOutcome);
  }

  /** The item a refused write reports (ReturnValuesOnConditionCheckFailure), else a fresh read. */
  async current(op: Operation, ref: RecordRef, failure: ConditionFailed): Promise<RecordItem | undefined> {
    // DynamoDB returns the item the condition saw; dynalite 4 does not, so read it: a later state
    // of the record, which the callers decide on afresh (docs/dynamodb.md, "dynalite").
    if (failure.item !== undefined) return this.decode(op, failure.item, true);
    return this.read(op, ref);
  }

  async decode(op: Operation, item: Item, withOutcome: boolean): Promise<RecordItem> {
    const record = fromItem(item);
    if (withOutcome && record.outcomeRef !== undefined) {
      record.outcome = await this.readOutcome(op, record.outcomeRef);
    }
    return record;
  }

  /** Writes a long outcome as chunk items (before the write that points to them) and names them. */
  async writeOutcome(op: Operation, outcome: string, expiresAtMs: number): Promise<OutcomeRef> {
    const bytes = Buffer.from(outcome, 'utf8');
    const id = randomUUID();
    const ttl = ttlOf(expiresAtMs + CHUNK_TTL_SLACK_MS);
    const items: Item[] = [];
    for (let offset = 0, index = 0; offset < bytes.length; offset += CHUNK_BYTES, index++) {
      items.push({ ...chunkKey(id, index), data: { B: bytes.subarray(offset, offset + CHUNK_BYTES) }, ttl });
    }
    await this.batchWrite(
      op,
      items.map((Item) => ({ PutRequest: { Item } })),
    );
    return { id, chunks: items.length };
  }

  /** Deletes the chunks of an outcome (a refused complete, a forgotten record). */
  async deleteOutcome(op: Operation, outcomeRef: OutcomeRef): Promise<void> {
    const requests = [];
    for (let index = 0; index < outcomeRef.chunks; index++) {
      requests.push({ DeleteRequest: { Key: chunkKey(outcomeRef.id, index) } });
    }
    await this.batchWrite(op, requests);
  }

  private async readOutcome(op: Operation, outcomeRef: OutcomeRef): Promise<string> {
    const keys = Array.from({ length: outcomeRef.chunks }, (_, index) => chunkKey(outcomeRef.id, index));
    const parts = new Map<string, Uint8Array>();
    // At most 16 MB per BatchGetItem answer: 40 chunks of 350 KB a request.
    for (let i = 0; i < keys.length; i += 40) {
      for (const item of await this.batchGet(op, keys.slice(i, i + 40))) {
        const data = item.data?.B;
        if (data !== undefined && item.pk?.S !== undefined) parts.set(item.pk.S, data);
      }
    }
    const ordered = keys.map((key) => parts.get(key.pk?.S ?? ''));
    if (ordered.some((part) => part === undefined)) {
      // The record points to chunks that are not all there: a lost write, never a shorter outcome.
      throw new StoreUnavailableError(
        op.name,
        `${this.address}: ${parts.size} of ${outcomeRef.chunks} outcome chunks found`,
      );
    }
    return Buffer.concat(ordered as Uint8Array[]).toString('utf8');
  }

  /** Every item of a query, page after page. */
  async *query(op: Operation, input: QueryCommandInput): AsyncGenerator<Item> {
    let start: Item | undefined;
    do {
      const page = await op.send<{ Items?: Item[]; LastEvaluatedKey?: Item }>(
        new QueryCommand({ ...input, ...(start === undefined ? {} : { ExclusiveStartKey: start }) }),
      );
      for (const item of page.Items ?? []) yield item;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
  }

  /**
   * BatchWriteItem in requests of 25 (at most 4 at once), sending unprocessed ones again
   * (throttling) within the deadline.
   */
  async batchWrite(op: Operation, requests: readonly object[]): Promise<void> {
    const batches: object[][] = [];
    for (let i = 0; i < requests.length; i += 25) batches.push(requests.slice(i, i + 25));
    const one = async (batch: object[]): Promise<void> => {
      let pending = batch;
      for (let round = 0; pending.length > 0; round++) {
        if (round > 0) await pause(Math.min(25 * 2 ** round, 500));
        const answer = await op.send<{ UnprocessedItems?: Record<string, object[]> }>(
          new BatchWriteItemCommand({ RequestItems: { [this.tableName]: pending as never } }),
        );
        pending = answer.UnprocessedItems?.[this.tableName] ?? [];
      }
    };
    for (let i = 0; i < batches.length; i += 4) await Promise.all(batches.slice(i, i + 4).map(one));
  }

  /** BatchGetItem (strongly consistent) of record items, in requests of 100. */
  async batchGet(op: Operation, keys: readonly Item[]): Promise<Item[]> {
    const found: Item[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let pending: Item[] = keys.slice(i, i + 100);
      for (let round = 0; pending.length > 0; round++) {
        if (round > 0) await pause(Math.min(25 * 2 ** round, 500));
        const answer = await op.send<{
          Responses?: Record<string, Item[]>;
          UnprocessedKeys?: Record<string, { Keys?: Item[] }>;
        }>(
          new BatchGetItemCommand({
            RequestItems: { [this.tableName]: { Keys: pending, ConsistentRead: true } },
          }),
        );
        found.push(...(answer.Responses?.[this.tableName] ?? []));
        pending = answer.UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return found;
  }
}

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A fresh version token: every write sets one, so a condition on it never matches an older item. */
export function newVersion(): string {
  return randomUUID();
}
