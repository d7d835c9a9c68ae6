// The PostgresStore's SQL, read from src/postgres/sql/*.sql (see ../shared/sql-files.ts).
// A new statement is a new .sql file named here.
import { loadSqlFiles } from '../shared/sql-files.js';

export const { migrations, statements, statementFiles } = loadSqlFiles('postgres', {
  claim: 'claim',
  cleanup: 'cleanup',
  complete: 'complete',
  databaseNow: 'database-now',
  ensureMigrationsTable: 'ensure-migrations-table',
  forget: 'forget',
  get: 'get',
  listNewest: 'list-newest',
  listOldest: 'list-oldest',
  markIndeterminate: 'mark-indeterminate',
  readLease: 'read-lease',
  release: 'release',
  renew: 'renew',
  resolutions: 'resolutions',
  resolveCompleted: 'resolve-completed',
  resolveReleased: 'resolve-released',
});
