// Field case C03 (docs/field-cases.md) on PostgresStore, against a real PostgreSQL
// (DATABASE_URL); the scenario is test/cases/scenarios/c03.ts. Lease deadlines are judged by the
// database clock.
import type { PostgresStore } from '@toolfence/stores/postgres';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../support/postgres.js';
import { describeC03 } from './scenarios/c03.js';

let store: PostgresStore;
let teardown: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ store, teardown } = await openPostgresStore('c03'));
});

afterAll(async () => {
  await teardown?.();
});

describeC03('PostgreSQL', () => store, 'acme');
