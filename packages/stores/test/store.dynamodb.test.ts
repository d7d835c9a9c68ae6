// DynamoDBStore beyond the conformance suite: how many requests a decision costs, the path a
// refused write takes on DynamoDB (ReturnValuesOnConditionCheckFailure, which dynalite lacks),
// throttling and the SDK's retries inside the deadline, and what its errors say.
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { StoreConfigurationError, StoreUnavailableError } from '@toolfence/core';
import { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS, randomRef } from '../../../test/support/claims.js';
import {
  type Dynalite,
  dynamoStore,
  emulatorConfig,
  randomTableName,
  startDynalite,
} from '../../../test/support/dynalite.js';

const tableName = randomTableName('store');
let emulator: Dynalite;
const stores: DynamoDBStore[] = [];
const clients: DynamoDBClient[] = [];

beforeAll(async () => {
  emulator = await startDynalite();
  await dynamoStore(emulator.endpoint, tableName).ensureSchema();
});

afterAll(async () => {
  for (const store of stores) await store.close();
  for (const client of clients) client.destroy();
  await emulator?.close();
});

interface Counted {
  readonly client: DynamoDBClient;
  /** Commands sent, by name, in order (each SDK attempt counts once). */
  readonly sent: string[];
}

/**
 * A client that records every attempt it sends. With `returnItemOnRefusal`, a refused
 * conditional write carries the item as DynamoDB's `ReturnValuesOnConditionCheckFailure:
 * 'ALL_OLD'` does (read here from a second client: dynalite returns none).
 */
function countedClient(options: { returnItemOnRefusal?: boolean; maxAttempts?: number } = {}): Counted {
  const client = new DynamoDBClient({
    ...emulatorConfig(emulator.endpoint),
    maxAttempts: options.maxAttempts ?? 3,
  });
  const reader = new DynamoDBClient(emulatorConfig(emulator.endpoint));
  clients.push(client, reader);
  const sent: string[] = [];
  client.middlewareStack.add(
    (next, context) => async (args) => {
      sent.push(String(context.commandName));
      return next(args);
    },
    { step: 'finalizeRequest', name: 'countAttempts', priority: 'low' },
  );
  if (options.returnItemOnRefusal) {
    client.middlewareStack.add(
      (next) => async (args) => {
        try {
          return await next(args);
        } catch (error) {
          const input = args.input as {
            ReturnValuesOnConditionCheckFailure?: string;
            Item?: object;
            Key?: object;
          };
          if (
            (error as Error).name === 'ConditionalCheckFailedException' &&
            input.ReturnValuesOnConditionCheckFailure
          ) {
            const key = input.Key ?? pickKey(input.Item as Record<string, unknown>);
            const found = await reader.send(
              new GetItemCommand({ TableName: tableName, Key: key as never, ConsistentRead: true }),
            );
            (error as { Item?: unknown }).Item = found.Item;
          }
          throw error;
        }
      },
      { step: 'initialize', name: 'returnItemOnRefusal' },
    );
  }
  return { client, sent };
}

function pickKey(item: Record<string, unknown>): object {
  return { pk: item.pk, sk: item.sk };
}

function storeOn(client: DynamoDBClient, operationTimeoutMs?: number): DynamoDBStore {
  const store = new DynamoDBStore({
    client,
    tableName,
    ...(operationTimeoutMs ? { operationTimeoutMs } : {}),
  });
  stores.push(store);
  return store;
}

describe('requests per decision', () => {
  it('a first claim, a renew and a complete are one request each; a replay one on DynamoDB, two on dynalite', async () => {
    const ref = randomRef();
    const counted = countedClient({ returnItemOnRefusal: true });
    const store = storeOn(counted.client);
    const options = claimOptions();
    const acquired = await store.claim(ref, options);
    expect(acquired).toMatchObject({ status: 'acquired', fence: 1 });
    expect(counted.sent).toEqual(['PutItemCommand']);
    counted.sent.length = 0;
    expect(await store.renew(ref, { fence: 1, owner: options.owner }, 30_000)).toMatchObject({
      status: 'renewed',
    });
    expect(await store.complete(ref, { fence: 1, owner: options.owner }, '"done"', DAY_MS)).toEqual({
      status: 'completed',
    });
    expect(counted.sent).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);

    // A replay: the refused PutItem brings the record along (DynamoDB), nothing else is sent.
    counted.sent.length = 0;
    const replay = await store.claim(ref, claimOptions());
    expect(replay).toMatchObject({ status: 'completed', record: { outcome: '"done"', fence: 1 } });
    expect(counted.sent).toEqual(['PutItemCommand']);

    // dynalite's own answer has no item: the store reads it.
    const plain = countedClient();
    const replayOnDynalite = await storeOn(plain.client).claim(ref, claimOptions());
    expect(replayOnDynalite).toMatchObject({ status: 'completed', record: { outcome: '"done"' } });
    expect(plain.sent).toEqual(['PutItemCommand', 'GetItemCommand']);
  });

  it('a busy claim and a stale complete are answered from the refused write alone', async () => {
    const ref = randomRef();
    const counted = countedClient({ returnItemOnRefusal: true });
    const store = storeOn(counted.client);
    const holder = claimOptions();
    await store.claim(ref, holder);
    counted.sent.length = 0;
    const busy = await store.claim(ref, claimOptions());
    expect(busy).toMatchObject({ status: 'busy', record: { owner: holder.owner, fence: 1 } });
    const stale = await store.complete(ref, { fence: 1, owner: 'someone-else' }, '"x"', DAY_MS);
    expect(stale).toMatchObject({ status: 'stale', record: { owner: holder.owner, state: 'in_progress' } });
    expect(counted.sent).toEqual(['PutItemCommand', 'UpdateItemCommand']);
  });

  it('an outcome above 64 KiB goes to chunk items first and comes back exact through a refused write', async () => {
    const ref = randomRef();
    const counted = countedClient({ returnItemOnRefusal: true });
    const store = storeOn(counted.client);
    const options = claimOptions();
    await store.claim(ref, options);
    const outcome = `"${'é'.repeat(300_000)}\u0000😀"`; // ~600 KB of UTF-8: two chunks
    counted.sent.length = 0;
    expect(await store.complete(ref, { fence: 1, owner: options.owner }, outcome, DAY_MS)).toEqual({
      status: 'completed',
    });
    expect(counted.sent).toEqual(['BatchWriteItemCommand', 'UpdateItemCommand']);
    counted.sent.length = 0;
    const replay = await store.claim(ref, claimOptions());
    expect(replay.status).toBe('completed');
    expect(replay.status === 'completed' && replay.record.outcome === outcome).toBe(true);
    expect(counted.sent).toEqual(['PutItemCommand', 'BatchGetItemCommand']);
  });

  it('forget deletes the outcome chunks of a forgotten record', async () => {
    const ref = randomRef();
    const store = storeOn(countedClient().client);
    const options = claimOptions();
    await store.claim(ref, options);
    await store.complete(ref, { fence: 1, owner: options.owner }, `"${'x'.repeat(800_000)}"`, DAY_MS);
    const reader = countedClient().client;
    const raw = await reader.send(
      new GetItemCommand({
        TableName: tableName,
        Key: { pk: { S: `${ref.tenant.length}/${ref.tenant}/${ref.key}` }, sk: { S: 'r' } },
        ConsistentRead: true,
      }),
    );
    const id = raw.Item?.outRef?.M?.id?.S as string;
    const chunks = Number(raw.Item?.outRef?.M?.n?.N);
    expect(chunks).toBe(3);
    const chunk = (index: number) =>
      reader.send(
        new GetItemCommand({
          TableName: tableName,
          Key: { pk: { S: `c#${id}#${index}` }, sk: { S: 'c' } },
          ConsistentRead: true,
        }),
      );
    expect((await chunk(2)).Item?.data?.B?.byteLength).toBe(800_002 - 2 * 350 * 1024);
    expect(await store.forget({ tenant: ref.tenant })).toBe(1);
    for (let index = 0; index < chunks; index++) expect((await chunk(index)).Item).toBeUndefined();
  });
});

describe('failures', () => {
  it('throttling is retried by the SDK within the deadline, then is StoreUnavailableError', async () => {
    const counted = countedClient({ maxAttempts: 3 });
    counted.client.middlewareStack.add(
      () => async () => {
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
          name: 'ProvisionedThroughputExceededException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        });
      },
      { step: 'deserialize', name: 'throttle' },
    );
    const store = storeOn(counted.client, 5_000);
    const started = performance.now();
    const error = await store.claim(randomRef(), claimOptions()).catch((e: unknown) => e);
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('ProvisionedThroughputExceededException');
    expect((error as StoreUnavailableError).operation).toBe('claim');
    // The SDK's three attempts (with its backoff) happened, inside the store's deadline.
    expect(counted.sent).toEqual(['PutItemCommand', 'PutItemCommand', 'PutItemCommand']);
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('retries that would outlast operationTimeoutMs are cut off at it', async () => {
    const counted = countedClient({ maxAttempts: 1_000 });
    counted.client.middlewareStack.add(
      () => async () => {
        throw Object.assign(new Error('throttled'), {
          name: 'ThrottlingException',
          $metadata: { httpStatusCode: 400 },
        });
      },
      { step: 'deserialize', name: 'throttle' },
    );
    const store = storeOn(counted.client, 400);
    const started = performance.now();
    const error = await store.get(randomRef()).catch((e: unknown) => e);
    const elapsed = performance.now() - started;
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('did not answer within 400 ms');
    expect(elapsed).toBeGreaterThanOrEqual(390);
    expect(elapsed).toBeLessThan(400 * 2 + 1_000);
  });

  it('a missing table is StoreConfigurationError naming ensureSchema; errors name the table and endpoint, never the secret', async () => {
    const store = new DynamoDBStore({
      clientConfig: {
        endpoint: emulator.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI-secret' },
      },
      tableName: randomTableName('missing'),
    });
    stores.push(store);
    const error = await store.claim(randomRef(), claimOptions()).catch((e: unknown) => e);
    expect(StoreConfigurationError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('ensureSchema()');
    expect(message).toContain(emulator.endpoint);
    expect(message).not.toContain('wJalrXUtnFEMI-secret');
  });

  it('refuses options it cannot use before sending anything', () => {
    expect(() => new DynamoDBStore({ tableName })).toThrow(TypeError);
    expect(() => new DynamoDBStore({ clientConfig: {}, tableName: 'x' })).toThrow(/tableName/);
    expect(() => new DynamoDBStore({ clientConfig: {}, tableName, operationTimeoutMs: 0 })).toThrow(
      RangeError,
    );
  });
});
