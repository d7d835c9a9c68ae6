// The PostgresStore's options and the shapes it accepts (public: re-exported by index.ts).
import type { Pool } from 'pg';
import type { PostgresListenConnection } from './settle-signal.js';

/**
 * Anything that runs a parameterised statement: pg's `Pool`, `Client` or `PoolClient`, or a
 * wrapper of your own (tracing, retries). Only `rows` and `rowCount` of the result are read.
 */
export interface PostgresQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[]; rowCount?: number | null }>;
}

/** A statement as pg's `Pool`, `Client` and `PoolClient` take it: named ones are prepared once per connection. */
export interface PostgresQueryConfig {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

/** Settings of opportunistic cleanup; see {@link PostgresStoreOptions.autoCleanup}. */
export interface PostgresAutoCleanupOptions {
  /** Run after this many claims. Default 1000. */
  readonly everyClaims?: number;
  /** ...or when this long has passed since the last run and there was a claim. Default 60000. */
  readonly intervalMs?: number;
  /** Rows deleted per run. Default 1000. */
  readonly limit?: number;
}

export interface PostgresStoreOptions {
  /**
   * Where statements run. Every ownership decision is one statement, so any pool works,
   * including PgBouncer in transaction mode. When this is a pg `Pool` (it has `connect()` and
   * `totalCount`), the store also checks out a client from it for each `ensureSchema()`
   * transaction, and opens ONE connection of its own, outside the pool, for LISTEN (unless
   * `listenClient` is given): `new pool.Client(pool.options)`, as the pool opens its clients, so
   * a wait never takes a slot and a pool of any size, `max: 1` included, serves claims. Otherwise
   * it must be a single connection (`Client`, `PoolClient`) for `ensureSchema()`, and waiters poll
   * unless `listenClient` is given. The store never ends it.
   *
   * A client the store checks out has the store's 'error' listener from the hand-over until it
   * goes back (packages/stores/src/postgres/pg-checkout.ts); idle clients are the pool's, so give
   * a pg `Pool` its `pool.on('error', ...)` (without one, pg-pool throws a dropped idle
   * connection's error and the process exits), and a `Client` you pass its own listener.
   */
  readonly pool: Pool | PostgresQueryable;
  /** Schema of the records table. Default `"toolfence"`. Any name; always quoted. */
  readonly schema?: string;
  /** Name of the records table. Default `"idempotency_records"`. Any name up to 48 bytes. */
  readonly table?: string;
  /**
   * Opens the dedicated connection that LISTENs for settled records (one per store, opened on
   * the first `waitForSettle`, closed by `close()`). Use it to LISTEN directly on the primary
   * when `pool` goes through PgBouncer in transaction mode, where LISTEN does not work.
   * Default: a `Client` of the store's own, opened with a pg `Pool`'s settings (one connection
   * beyond the pool's `max`); otherwise waiters poll. The
   * store listens for the connection's 'error' only once the promise resolves: attach your own
   * before (a FATAL arriving in between would otherwise be an unhandled 'error' event).
   */
  readonly listenClient?: () => Promise<PostgresListenConnection>;
  /**
   * Delete expired rows in the background every so many claims or so often (off the caller's
   * path; at most one run at a time). `false` turns it off: then call `cleanup()` yourself.
   */
  readonly autoCleanup?: PostgresAutoCleanupOptions | false;
  /** While LISTEN is unavailable, waiters poll starting at this period (doubling up to 2 s). Default 100. */
  readonly pollIntervalMs?: number;
  /** While LISTEN is active, waiters still re-read this often, in case a notification was lost. Default 5000. */
  readonly safetyPollMs?: number;
  /** Failures of background work (cleanup, the LISTEN connection). Default: ignored. */
  readonly onBackgroundError?: (error: unknown) => void;
  /**
   * Run the store's statements as named (server-side prepared) statements, `{ name, text,
   * values }`: each is parsed and planned once per connection instead of on every call.
   * Default: `true` when `pool` is a pg `Pool`, `Client` or `PoolClient`, `false` for any other
   * queryable (set `true` only if yours passes such a config object on to pg). If the server
   * does not know a statement the connection prepared (PgBouncer in transaction mode before 1.21
   * or with `max_prepared_statements = 0`, `DISCARD ALL`), that call is sent again unnamed and
   * the store stops naming statements; the failed attempt ran nothing.
   */
  readonly preparedStatements?: boolean;
  /**
   * Client-side deadline of one operation in milliseconds, pool checkout and statement together
   * (rule S5). Default 5000. Past it the operation rejects with `StoreUnavailableError` naming the
   * operation, the store and its address; `statement_timeout` cannot fire on a server that is
   * frozen or cut off, this can. With a pg `Pool` the statement is also sent with pg's
   * `query_timeout`, so a connection whose statement timed out is destroyed (`release(err)`),
   * never returned to the pool; a `Client`/`PoolClient` you pass in is yours and is not closed.
   * Opening the LISTEN connection is bounded by it too, and `waitForSettle` answers within its
   * `timeoutMs` plus this. A statement that timed out is not withdrawn: it may still run later (a
   * late claim's lease then expires like any lost holder's).
   */
  readonly operationTimeoutMs?: number;
}

/** Options of {@link PostgresStore.ensureSchema}. */
export interface EnsureSchemaOptions {
  /**
   * The longest the whole call may take, in milliseconds, waiting for another process's
   * migration included. Default: none (a migration of a large table takes as long as it takes;
   * the store's `operationTimeoutMs` bounds only the connection checkout). Past it the call fails
   * with `StoreUnavailableError` and its connection is destroyed; what committed stays (each
   * migration's transaction, each batch of an online step) and the next call resumes from there.
   * @throws RangeError when not a whole number of ms in 1..2^31-1.
   */
  readonly timeoutMs?: number;
  /** Rows per transaction of a backfill (an online step of a migration). Default 5000. */
  readonly batchSize?: number;
  /** Called as each migration and each of its online steps starts, progresses and ends. */
  readonly onProgress?: (progress: MigrationProgress) => void;
}

/** What {@link EnsureSchemaOptions.onProgress} is told. */
export interface MigrationProgress {
  /** The migration's number and file name, e.g. 4 and `0004_listing`. */
  readonly version: number;
  readonly name: string;
  /**
   * `transaction` (the migration's catalog changes, in one transaction), then its online steps:
   * a backfill's label (`backfill updated_at`), `index <name>` or a statement's label.
   */
  readonly step: string;
  readonly phase: 'start' | 'progress' | 'done';
  /** A backfill: rows changed so far by this call, and the table's estimated row count. */
  readonly rows?: number;
  readonly totalRows?: number;
}

/** Result of {@link PostgresStore.ensureSchema}. */
export interface EnsureSchemaResult {
  /** Versions of the migrations this call applied (empty when the schema was up to date). */
  readonly applied: readonly number[];
}
