/**
 * `@toolfence/stores/postgres`: the PostgreSQL idempotency store. Requires the `pg` package
 * (an optional peer dependency of `@toolfence/stores`) and PostgreSQL 12 or later.
 */
export {
  type EnsureSchemaOptions,
  type EnsureSchemaResult,
  type MigrationProgress,
  type PostgresAutoCleanupOptions,
  type PostgresListenConnection,
  type PostgresQueryable,
  PostgresStore,
  type PostgresStoreOptions,
} from './postgres-store.js';
