// Field case C07 (docs/field-cases.md, C07) on SQLiteStore, on a file in WAL
// mode: lease deadlines are judged by the host clock inside each transaction.
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll, beforeAll } from 'vitest';
import { sqliteDirectory } from '../support/sqlite.js';
import { describeC07 } from './scenarios/c07.js';

const directory = sqliteDirectory('c07');
let store: SQLiteStore;

beforeAll(async () => {
  store = new SQLiteStore({ path: directory.file('c07.db') });
  await store.ensureSchema();
});

afterAll(async () => {
  await store?.close();
  directory.remove();
});

describeC07('SQLite', () => store, `r-${Date.now()}`);
