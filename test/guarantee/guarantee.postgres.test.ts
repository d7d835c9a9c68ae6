// The guarantee scenarios (test/guarantee/scenarios.ts) on PostgresStore, against a real
// PostgreSQL (DATABASE_URL). Records are lost by truncating this file's own schema's table.
import type { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresStore } from '../support/postgres.js';
import { describeGuarantee } from './scenarios.js';

let store: PostgresStore;
let teardown: (() => Promise<void>) | undefined;
let loseRecords: (() => Promise<void>) | undefined;

beforeAll(async () => {
  const opened = await openPostgresStore('guarantee');
  ({ store, teardown } = opened);
  // Only this file's own schema: the shared server and other files' data are never touched.
  loseRecords = async () => {
    await opened.pool.query(
      `TRUNCATE ${pg.escapeIdentifier(opened.schema)}.${pg.escapeIdentifier('idempotency_records')}`,
    );
  };
});

afterAll(async () => {
  await teardown?.();
});

describeGuarantee('PostgreSQL', () => store, `pg-${Date.now()}`, {
  loseRecords: async () => loseRecords?.(),
});
