// The PostgresStore's SQL: migrations/*.sql and statements/*.sql (see ../shared/sql-files.ts).
// A new statement is a new .sql file named here.
import { loadSqlFiles } from '../shared/sql-files.js';

export const { migrations, statements, statementFiles } = loadSqlFiles('postgres', {
  claim: 'claim',
  cleanup: 'cleanup',
  complete: 'complete',
  completeLocked: 'complete-locked',
  databaseNow: 'database-now',
  decide: 'decide',
  decideExpected: 'decide-expected',
  ensureMigrationsTable: 'ensure-migrations-table',
  forget: 'forget',
  get: 'get',
  listNewest: 'list-newest',
  listNewestAttention: 'list-newest-attention',
  listOldest: 'list-oldest',
  listOldestAttention: 'list-oldest-attention',
  markIndeterminate: 'mark-indeterminate',
  markIndeterminateLocked: 'mark-indeterminate-locked',
  readLease: 'read-lease',
  release: 'release',
  releaseLocked: 'release-locked',
  renew: 'renew',
  renewLocked: 'renew-locked',
  resolutions: 'resolutions',
  resolveCompleted: 'resolve-completed',
  resolveReleased: 'resolve-released',
});
