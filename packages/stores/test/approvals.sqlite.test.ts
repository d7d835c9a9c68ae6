// SQLiteStore's approvals (approval-cases.ts) on one file: each peer store has its own connection,
// so the claims racing for one approval meet at the file's write lock. approvals-processes.sqlite.test.ts
// races them across processes.
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { afterAll } from 'vitest';
import { sqliteDirectory } from '../../../test/support/sqlite.js';
import { describeApprovalCases } from './approval-cases.js';

const directory = sqliteDirectory('approvals');
const path = directory.file('approvals.db');

afterAll(() => directory.remove());

describeApprovalCases(
  'SQLiteStore',
  async () => {
    const store = new SQLiteStore({ path });
    await store.ensureSchema();
    return store;
  },
  async () => new SQLiteStore({ path }),
);
