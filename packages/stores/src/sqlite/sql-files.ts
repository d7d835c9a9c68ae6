// The SQLiteStore's SQL, read from src/sqlite/sql/*.sql (see ../shared/sql-files.ts).
// A new statement is a new .sql file named here.
import { loadSqlFiles } from '../shared/sql-files.js';

export const { migrations, statements, statementFiles } = loadSqlFiles('sqlite', {
  countLiveOfTenant: 'count-live-of-tenant',
  deleteRecord: 'delete-record',
  ensureMigrationsTable: 'ensure-migrations-table',
  forget: 'forget',
  insertRecord: 'insert-record',
  selectRecord: 'select-record',
  sweep: 'sweep',
  updateRecord: 'update-record',
});
