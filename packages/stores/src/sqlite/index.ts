/**
 * `@toolfence/stores/sqlite`: the SQLite idempotency store, durable records in one file shared by
 * the processes of ONE host. Requires the `better-sqlite3` package (an optional peer dependency of
 * `@toolfence/stores`).
 */
export { type SQLiteEnsureSchemaResult, SQLiteStore, type SQLiteStoreOptions } from './sqlite-store.js';
