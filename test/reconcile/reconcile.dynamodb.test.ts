// The reconcile scenarios (test/reconcile/scenarios.ts) on DynamoDBStore, against dynalite (an
// emulator in a child process of this file), on this file's own table.
import type { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type Dynalite, dynamoStore, randomTableName, startDynalite } from '../support/dynalite.js';
import { describeReconcile } from './scenarios.js';

const tableName = randomTableName('reconcile');
let emulator: Dynalite;
let store: DynamoDBStore;

beforeAll(async () => {
  emulator = await startDynalite();
  store = dynamoStore(emulator.endpoint, tableName);
  await store.ensureSchema();
});

afterAll(async () => {
  await store?.close();
  await emulator?.close();
});

describeReconcile('DynamoDB (dynalite)', () => store, 'dynamodb');
