// The SQLiteStore's SQL: migrations/*.sql and statements/*.sql (see ../shared/sql-files.ts).
// A new statement is a new .sql file named here.
import { loadSqlFiles } from '../shared/sql-files.js';

export const { migrations, statements, statementFiles } = loadSqlFiles('sqlite', {
  countLiveOfTenant: 'count-live-of-tenant',
  deleteRecord: 'delete-record',
  ensureMigrationsTable: 'ensure-migrations-table',
  forget: 'forget',
  forgetResolutions: 'forget-resolutions',
  insertRecord: 'insert-record',
  insertRequest: 'insert-request',
  insertResolution: 'insert-resolution',
  listNewest: 'list-newest',
  listOldest: 'list-oldest',
  raiseSweep: 'raise-sweep',
  selectRecord: 'select-record',
  selectResolutions: 'select-resolutions',
  sweep: 'sweep',
  sweepResolutions: 'sweep-resolutions',
  updateApproval: 'update-approval',
  updateCodec: 'update-codec',
  updateRecord: 'update-record',
});
