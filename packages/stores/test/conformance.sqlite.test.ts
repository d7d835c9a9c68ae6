// The store contract's conformance suite, run against an SQLite file (WAL mode).
import { describeStoreConformance } from '@toolfence/core/testing';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll } from 'vitest';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const directory = sqliteDirectory('conformance');

afterAll(() => directory.remove());

describeStoreConformance(
  'SQLiteStore',
  async () => {
    const store = new SQLiteStore({ path: directory.file('conformance.db') });
    await store.ensureSchema();
    return store;
  },
  {
    // A file whose directory does not exist cannot be opened: every operation is unavailable.
    createUnavailableStore: () => new SQLiteStore({ path: directory.file('missing-directory/records.db') }),
  },
);
