// The guarantee scenarios (test/guarantee/scenarios.ts) on DynamoDBStore, against dynalite (an
// emulator in a child process of this file). Records are lost by deleting the tenant's items
// (forget) on this file's own table.
import type { DynamoDBStore } from '@toolfence/stores/dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { type Dynalite, dynamoStore, randomTableName, startDynalite } from '../support/dynalite.js';
import { describeGuarantee } from './scenarios.js';

const tableName = randomTableName('guarantee');
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

describeGuarantee('DynamoDB (dynalite)', () => store, `ddb-${Date.now()}`, {
  loseRecords: async (tenant) => {
    await store.forget({ tenant });
  },
});
