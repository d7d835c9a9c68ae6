// DynamoDBStore's approvals (approval-cases.ts) against dynalite: every peer store has its own
// client, so the claims racing for one approval meet in the emulator's conditional writes.
import { afterAll, beforeAll } from 'vitest';
import {
  type Dynalite,
  dynamoStore,
  randomTableName,
  startDynalite,
} from '../../../test/support/dynalite.js';
import { describeApprovalCases } from './approval-cases.js';

const tableName = randomTableName('approvals');
let emulator: Dynalite;

beforeAll(async () => {
  emulator = await startDynalite();
  await dynamoStore(emulator.endpoint, tableName).ensureSchema();
});

afterAll(async () => {
  await emulator?.close();
});

// dynalite spends a few ms of its one core on each write: a generous deadline on a loaded machine.
const make = async () => dynamoStore(emulator.endpoint, tableName, { operationTimeoutMs: 20_000 });

describeApprovalCases('DynamoDBStore', make, make, { racers: 8, rounds: 5 });
