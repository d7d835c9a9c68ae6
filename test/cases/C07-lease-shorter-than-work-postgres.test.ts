// Field case C07 (docs/field-cases.md, C07) on PostgresStore, against a real
// PostgreSQL (DATABASE_URL).
import type { PostgresStore } from '@toolfence/stores/postgres';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../support/postgres.js';
import { describeC07 } from './scenarios/c07.js';

let store: PostgresStore;
let teardown: (() => Promise<void>) | undefined;

beforeAll(async () => {
  ({ store, teardown } = await openPostgresStore('c07'));
});

afterAll(async () => {
  await teardown?.();
});

describeC07('PostgreSQL', () => store, `r-${Date.now()}`);
