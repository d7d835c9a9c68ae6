import { createHash } from 'node:crypto';
import type {
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  RecordState,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionEntry,
  ResolveResult,
  WaitOptions,
  WaitResult,
} from '@toolfence/core';
import {
  checkClaimOptions,
  checkHolder,
  checkLeaseMs,
  checkOutcome,
  checkRecordedError,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkTenant,
  checkWaitOptions,
  StoreUnavailableError,
} from '@toolfence/core';
import type { Pool, PoolClient } from 'pg';

import { migrations, statements } from './generated-sql.js';
import { type PostgresNames, postgresNames, renderSql, validateIdentifier } from './identifiers.js';
import { listPostgres, operatorFieldsOf, resolutionsPostgres } from './listing.js';
import { type FailureSite, toStoreError } from './postgres-errors.js';
import { type PostgresListenConnection, SettleListener, type SettleWaiter } from './settle-listener.js';

export type { PostgresListenConnection } from './settle-listener.js';

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

type QueryResultLike = { rows: unknown[]; rowCount?: number | null };

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
   * `totalCount`), the store also checks out clients from it: one for each `ensureSchema()`
   * transaction, and one held for LISTEN (unless `listenClient` is given). Otherwise it must be
   * a single connection (`Client`, `PoolClient`) for `ensureSchema()`, and waiters poll unless
   * `listenClient` is given. The store never ends it.
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
   * Default: `pool.connect()` when `pool` is a pg `Pool`; otherwise waiters poll.
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

/** Result of {@link PostgresStore.ensureSchema}. */
export interface EnsureSchemaResult {
  /** Versions of the migrations this call applied (empty when the schema was up to date). */
  readonly applied: readonly number[];
}

type Row = Record<string, unknown>;

interface SessionClient extends PostgresQueryable {
  release(destroy?: boolean | Error): void;
  on?(event: 'error', listener: (error: Error) => void): unknown;
  removeListener?(event: 'error', listener: (error: Error) => void): unknown;
}

const maxPollIntervalMs = 2_000;
const defaultOperationTimeoutMs = 5_000;
/** Longest a waiter waits for LISTEN to be set up before it reads anyway (and polls). */
const listenWaitMs = 2_000;

/**
 * An {@link IdempotencyStore} on PostgreSQL (node-postgres `pg`, an optional peer dependency).
 *
 * - Every ownership decision (claim, renew, complete, release, markIndeterminate, resolve) is
 *   ONE SQL statement, correct under READ COMMITTED with concurrent callers: a claim answers a
 *   conflict, a settled record or a busy one from its snapshot without writing, and otherwise
 *   is an `INSERT ... ON CONFLICT DO UPDATE` that locks the row and decides on its latest version;
 *   holder operations lock the row with `SELECT ... FOR UPDATE` and change it in the same
 *   statement. Leases are rows, not session locks, so a claim on one pooled connection and a
 *   complete on another work, through PgBouncer in transaction mode too.
 * - Deadlines come from the database clock (`statement_timestamp()`).
 * - Round trips: a first call is 2 (claim, complete), a repeat 1, a takeover 1.
 * - Expired rows are treated as absent and deleted by {@link cleanup} in bounded batches.
 * - {@link waitForSettle} LISTENs on one shared connection per store, with polling as fallback.
 * - Input is checked first (`StoreInputError`, nothing sent). Every operation has a client-side
 *   deadline, `operationTimeoutMs` (default 5000): past it, `StoreUnavailableError`. A statement
 *   the database refuses is `StoreInputError` (SQLSTATE classes 22, 54) or
 *   `StoreConfigurationError` (a missing table: run `ensureSchema()`; a privilege; a read-only
 *   node); only an outage is `StoreUnavailableError`. Errors name the store's address, never
 *   credentials.
 * - Outcomes are byte-exact, NUL included (migration 0003 keeps those in a bytea column).
 *
 * Create the table first with {@link ensureSchema}.
 *
 * ```ts
 * import pg from 'pg';
 * import { PostgresStore } from '@toolfence/stores/postgres';
 * const store = new PostgresStore({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL }) });
 * await store.ensureSchema();
 * ```
 */
export class PostgresStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  private readonly pool: Pool | PostgresQueryable;
  private readonly names: PostgresNames;
  private readonly sql: { readonly [K in keyof typeof statements]: string };
  /** Prepared-statement name of each rendered statement text. */
  private readonly statementNames = new Map<string, string>();
  private prepared: boolean;
  private readonly listener: SettleListener;
  private readonly autoCleanup: Required<PostgresAutoCleanupOptions> | undefined;
  private readonly pollIntervalMs: number;
  private readonly safetyPollMs: number;
  private readonly onBackgroundError: (error: unknown) => void;
  private claimsSinceCleanup = 0;
  private lastCleanupAtMs = Date.now();
  private backgroundCleanup: Promise<void> | undefined;
  private isClosed = false;
  private readonly operationTimeoutMs: number;
  /** `PostgresStore at host:port/database` (never credentials) and the table, for messages. */
  private readonly site: FailureSite;
  /** pg's Pool, Client or PoolClient: statements are sent as config objects with `query_timeout`. */
  private readonly pgQueryable: boolean;

  /**
   * @throws TypeError when `pool` has no `query` or a schema/table name cannot be used.
   * @throws RangeError when `operationTimeoutMs` is not a whole number of ms in 1..2^31-1.
   */
  constructor(options: PostgresStoreOptions) {
    if (typeof options?.pool?.query !== 'function') {
      throw new TypeError(
        'PostgresStore: `pool` must have a query(text, values) method (a pg Pool or Client)',
      );
    }
    this.pool = options.pool;
    this.operationTimeoutMs = options.operationTimeoutMs ?? defaultOperationTimeoutMs;
    if (
      !Number.isSafeInteger(this.operationTimeoutMs) ||
      this.operationTimeoutMs < 1 ||
      this.operationTimeoutMs > 2_147_483_647
    ) {
      throw new RangeError(
        `PostgresStore: operationTimeoutMs must be a whole number of milliseconds in 1..2147483647, got ${String(options.operationTimeoutMs)}`,
      );
    }
    this.pgQueryable = isPgQueryable(this.pool);
    const schema = validateIdentifier('schema', options.schema ?? 'toolfence');
    const table = validateIdentifier('table', options.table ?? 'idempotency_records');
    this.names = postgresNames(schema, table);
    this.site = { store: `PostgresStore at ${describeAddress(this.pool)}`, table: this.names.table };
    this.sql = Object.fromEntries(
      Object.entries(statements).map(([name, text]) => [name, renderSql(text, this.names.placeholders)]),
    ) as { [K in keyof typeof statements]: string };
    for (const text of Object.values(this.sql)) {
      // Named by the rendered text (which includes the table), so stores of different tables
      // sharing one pool never reuse a name for another statement.
      this.statementNames.set(
        text,
        `toolfence_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
      );
    }
    this.prepared = options.preparedStatements ?? this.pgQueryable;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.autoCleanup =
      options.autoCleanup === false
        ? undefined
        : {
            everyClaims: options.autoCleanup?.everyClaims ?? 1000,
            intervalMs: options.autoCleanup?.intervalMs ?? 60_000,
            limit: options.autoCleanup?.limit ?? 1000,
          };
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.safetyPollMs = options.safetyPollMs ?? 5_000;
    const pool = this.pool;
    const openListenConnection =
      options.listenClient ??
      (isPgPool(pool) ? () => pool.connect() as Promise<PostgresListenConnection> : undefined);
    this.listener = new SettleListener(
      openListenConnection,
      this.names.channel,
      (error) => this.onBackgroundError(error),
      this.operationTimeoutMs,
    );
  }

  /** The quoted, schema-qualified name of the records table, e.g. `"toolfence"."idempotency_records"`. */
  get tableName(): string {
    return this.names.table;
  }

  /** The NOTIFY channel of this store's table. */
  get channel(): string {
    return this.names.channel;
  }

  /**
   * Creates or upgrades the schema: applies, in order, every migration not yet recorded in the
   * `<table>_migrations` table, in one transaction that holds a transaction-scoped advisory lock
   * (`pg_advisory_xact_lock`), so any number of processes may call it at once: one applies, the
   * others wait and find nothing to do. Idempotent. Needs CREATE on the database (to create the
   * schema) or on the schema when it exists.
   * @throws StoreUnavailableError when the database cannot be reached or does not answer within
   *   `operationTimeoutMs` per statement; StoreConfigurationError when it refuses (a privilege).
   */
  async ensureSchema(): Promise<EnsureSchemaResult> {
    this.assertOpen('ensureSchema');
    const pool = this.pool;
    let session: PostgresQueryable;
    let client: SessionClient | undefined;
    let broken: unknown;
    // A checked-out pg client has no 'error' listener: a connection dropped between two
    // statements of the transaction would otherwise be an unhandled 'error' event.
    const onClientError = (error: Error): void => {
      broken ??= error;
    };
    try {
      if (isPgPool(pool)) {
        const checkout = pool.connect() as unknown as Promise<SessionClient>;
        client = await this.withDeadline('ensureSchema', checkout, (late) => late.release(true));
        client.on?.('error', onClientError);
        const checkedOut = client;
        // Each statement of the migration transaction is bounded; one that timed out poisons the
        // connection, which is then destroyed below instead of going back to the pool.
        session = {
          query: (text: string, values?: unknown[]) =>
            this.withDeadline('ensureSchema', checkedOut.query(text, values)).catch((error: unknown) => {
              broken ??= error;
              throw error;
            }),
        };
      } else {
        session = pool;
      }
    } catch (error) {
      throw toStoreError('ensureSchema', error, this.site);
    }
    try {
      await session.query('BEGIN');
      try {
        await session.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [this.names.lockName]);
        const schemaExists = await session.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [
          unquotedSchema(this.names),
        ]);
        // Only when missing: CREATE SCHEMA IF NOT EXISTS would need CREATE on the database even
        // when the schema is there.
        if (schemaExists.rows.length === 0) await session.query(`CREATE SCHEMA ${this.names.schema}`);
        await session.query(renderSql(statements.ensureMigrationsTable, this.names.placeholders));
        const done = await session.query(
          `SELECT version FROM ${this.names.placeholders.migrations_table} ORDER BY version`,
        );
        const appliedBefore = new Set((done.rows as Row[]).map((row) => Number(row.version)));
        const applied: number[] = [];
        for (const migration of migrations) {
          if (appliedBefore.has(migration.version)) continue;
          await session.query(renderSql(migration.text, this.names.placeholders));
          await session.query(
            `INSERT INTO ${this.names.placeholders.migrations_table} (version, name) VALUES ($1, $2)`,
            [migration.version, migration.name],
          );
          applied.push(migration.version);
        }
        await session.query('COMMIT');
        return { applied };
      } catch (error) {
        await session.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError;
        });
        throw error;
      }
    } catch (error) {
      broken ??= isConnectionLevel(error) ? error : undefined;
      throw toStoreError('ensureSchema', error, this.site);
    } finally {
      client?.removeListener?.('error', onClientError);
      client?.release(broken === undefined ? undefined : broken instanceof Error ? broken : true);
    }
  }

  /** {@inheritDoc IdempotencyStore.claim} */
  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    checkRecordRef(ref);
    checkClaimOptions(options);
    const row = await this.queryOne('claim', this.sql.claim, [
      ref.tenant,
      ref.key,
      options.tool,
      options.fingerprint,
      options.owner,
      options.leaseMs,
      options.retentionMs,
      options.mode,
      options.maxAttempts,
      options.checkFingerprint,
      options.runId ?? null, // [#20 listing] kept for operators
      options.callId ?? null,
      options.description ?? null,
    ]);
    this.afterClaim();
    if (row === undefined)
      throw new StoreUnavailableError('claim', 'PostgreSQL returned no row for the claim');
    if (row.acquired === true) {
      const attempt = Number(row.attempt);
      return {
        status: 'acquired',
        fence: Number(row.fence),
        attempt,
        leaseExpiresAtMs: Number(row.lease_expires_at_ms),
        takeover: attempt > 1,
      };
    }
    const record = toRecord(row);
    if (
      record.tool !== options.tool ||
      (options.checkFingerprint && record.fingerprint !== options.fingerprint)
    ) {
      return { status: 'conflict', record };
    }
    switch (record.state) {
      case 'completed':
        return { status: 'completed', record };
      case 'indeterminate':
        return { status: 'indeterminate', record };
      case 'abandoned':
        return { status: 'abandoned', record };
      case 'in_progress':
        return { status: 'busy', record, nowMs: Number(row.now_ms) };
    }
  }

  /** {@inheritDoc IdempotencyStore.renew} */
  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkLeaseMs(leaseMs);
    const row = await this.queryOne('renew', this.sql.renew, [
      ref.tenant,
      ref.key,
      holder.fence,
      holder.owner,
      leaseMs,
    ]);
    if (row === undefined) return { status: 'lost', reason: 'not_found' };
    if (row.renewed_lease_ms !== null && row.renewed_lease_ms !== undefined) {
      return { status: 'renewed', leaseExpiresAtMs: Number(row.renewed_lease_ms) };
    }
    if (Number(row.fence) !== holder.fence || row.owner !== holder.owner) {
      return { status: 'lost', reason: 'stale' };
    }
    return { status: 'lost', reason: 'settled' };
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkOutcome(outcome);
    checkRetentionMs(retentionMs);
    const stored = storedOutcome(outcome);
    const row = await this.queryOne('complete', this.sql.complete, [
      ref.tenant,
      ref.key,
      holder.fence,
      holder.owner,
      stored.text,
      retentionMs,
      stored.bytes,
    ]);
    if (row === undefined) return { status: 'not_found' };
    return row.changed === true ? { status: 'completed' } : { status: 'stale', record: toRecord(row) };
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    const row = await this.queryOne('release', this.sql.release, [
      ref.tenant,
      ref.key,
      holder.fence,
      holder.owner,
    ]);
    if (row === undefined) return { status: 'not_found' };
    return row.changed === true ? { status: 'released' } : { status: 'stale', record: toRecord(row) };
  }

  /** {@inheritDoc IdempotencyStore.markIndeterminate} */
  async markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkRecordedError(error);
    checkRetentionMs(retentionMs);
    const row = await this.queryOne('markIndeterminate', this.sql.markIndeterminate, [
      ref.tenant,
      ref.key,
      holder.fence,
      holder.owner,
      error.type,
      error.message,
      retentionMs,
    ]);
    if (row === undefined) return { status: 'not_found' };
    return row.changed === true ? { status: 'marked' } : { status: 'stale', record: toRecord(row) };
  }

  /** {@inheritDoc IdempotencyStore.get} */
  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    checkRecordRef(ref);
    const row = await this.queryOne('get', this.sql.get, [ref.tenant, ref.key]);
    return row === undefined ? null : toRecord(row);
  }

  /** {@inheritDoc IdempotencyStore.resolve} */
  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    let row: Row | undefined;
    if ('outcome' in resolution) {
      checkRetentionMs(retentionMs);
      const stored = storedOutcome(resolution.outcome);
      row = await this.queryOne('resolve', this.sql.resolveCompleted, [
        ref.tenant,
        ref.key,
        stored.text,
        retentionMs,
        stored.bytes,
        resolution.by ?? null, // [#20 listing] the audit, kept in the resolution entry
        resolution.reason ?? null,
      ]);
    } else {
      checkRetentionMs(retentionMs);
      row = await this.queryOne('resolve', this.sql.resolveReleased, [
        ref.tenant,
        ref.key,
        retentionMs,
        resolution.by ?? null,
        resolution.reason ?? null,
      ]);
    }
    if (row === undefined) return { status: 'not_found' };
    return row.changed === true
      ? { status: 'resolved' }
      : { status: 'not_resolvable', record: toRecord(row) };
  }

  /** [#20 listing] {@inheritDoc IdempotencyStore.list} */
  async list(options: ListOptions): Promise<ListPage> {
    return listPostgres((...args) => this.query(...args), this.sql, options, toRecord);
  }

  /** [#20 listing] {@inheritDoc IdempotencyStore.resolutions} */
  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    return resolutionsPostgres((...args) => this.query(...args), this.sql.resolutions, ref);
  }

  /**
   * {@inheritDoc IdempotencyStore.forget}
   * Rows of the tenant past retention are deleted too but not counted.
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    checkTenant(options?.tenant);
    const row = await this.queryOne('forget', this.sql.forget, [options.tenant]);
    return Number(row?.erased ?? 0);
  }

  /**
   * Deletes at most `limit` rows (default 1000) past their retention deadline, in one bounded
   * statement, and returns how many it deleted. Call it in a loop until it returns less than
   * `limit` to drain a backlog. Expired rows are already ignored by every other operation; this
   * only reclaims space. Also run in the background, see {@link PostgresStoreOptions.autoCleanup}.
   * @throws StoreUnavailableError
   */
  async cleanup(options: { readonly limit?: number } = {}): Promise<number> {
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError('PostgresStore.cleanup: limit must be an integer >= 1');
    }
    const result = await this.query('cleanup', this.sql.cleanup, [limit]);
    return result.rowCount ?? 0;
  }

  /**
   * {@inheritDoc IdempotencyStore.waitForSettle}
   *
   * LISTENs (on the store's one shared connection) before reading the record, so a settle
   * between the read and the wait is not missed; wakes at the lease deadline as the database
   * clock counts it; polls while LISTEN is unavailable. A notification is taken as settled
   * without a re-read: at worst the caller claims again and is told the key is busy.
   * Rejects with `signal.reason` when `signal` aborts.
   */
  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    this.assertOpen('waitForSettle');
    if (options.signal?.aborted) throw options.signal.reason;
    const digest = recordDigest(ref);
    return new Promise<WaitResult>((resolve, reject) => {
      let finished = false;
      let started = false;
      let firstReadDone = false;
      let timedOut = false;
      let checking = false;
      let recheck = false;
      let leaseDueAtMs = Number.POSITIVE_INFINITY;
      let pollMs = this.pollIntervalMs;
      let checkTimer: NodeJS.Timeout | undefined;

      const end = (): boolean => {
        if (finished) return false;
        finished = true;
        clearTimeout(checkTimer);
        clearTimeout(timeoutTimer);
        clearTimeout(hardStop);
        options.signal?.removeEventListener('abort', onAbort);
        remove();
        return true;
      };
      const finish = (result: WaitResult): void => {
        if (end()) resolve(result);
      };
      const fail = (error: unknown): void => {
        if (end()) reject(error);
      };
      const onAbort = (): void => fail(options.signal?.reason);

      const schedule = (): void => {
        if (finished) return;
        clearTimeout(checkTimer);
        let periodMs: number;
        if (this.listener.listening) {
          periodMs = this.safetyPollMs;
        } else {
          periodMs = pollMs;
          pollMs = Math.min(pollMs * 2, maxPollIntervalMs);
        }
        // +1: the lease is judged on the database clock; be just past it when re-reading (and a
        // read that still finds it live re-arms: the database decides, not this timer).
        const delayMs = Math.max(0, Math.min(periodMs, leaseDueAtMs - performance.now() + 1));
        checkTimer = setTimeout(() => void check(), delayMs);
      };

      const check = async (): Promise<void> => {
        if (finished) return;
        if (checking) {
          recheck = true;
          return;
        }
        started = true;
        checking = true;
        clearTimeout(checkTimer);
        try {
          const row = await this.queryOne('waitForSettle', this.sql.readLease, [ref.tenant, ref.key]);
          firstReadDone = true;
          if (row === undefined || row.state !== 'in_progress') return finish('settled');
          // Judged in SQL exactly as claim judges the lease (rule S6), not from rounded ms.
          if (row.lease_expired === true) return finish('lease_expired');
          if (timedOut) return finish('timeout');
          const remainingMs = Math.max(1, Number(row.lease_remaining_ms));
          leaseDueAtMs = performance.now() + remainingMs;
          // The record changed under the read (see read-lease.sql): read again now, or a settle
          // that is not notified would only be seen by the safety poll.
          if (row.notified === false) recheck = true;
          else schedule();
        } catch (error) {
          fail(error);
        } finally {
          checking = false;
          if (recheck && !finished) {
            recheck = false;
            void check();
          }
        }
      };

      const waiter: SettleWaiter = {
        notified: () => finish('settled'),
        restored: () => {
          if (started) void check();
        },
        lost: () => {
          pollMs = this.pollIntervalMs;
          schedule();
        },
        closed: () => finish('settled'),
      };
      const remove = this.listener.add(digest, waiter);
      // The first read decides even when the timeout is shorter than its round trip (a settled
      // record answers 'settled'); it is bounded by operationTimeoutMs, and so is the whole wait:
      // never longer than timeoutMs + operationTimeoutMs (rule S5).
      const timeoutTimer = setTimeout(() => {
        if (firstReadDone) finish('timeout');
        else timedOut = true;
      }, options.timeoutMs);
      const hardStop = setTimeout(
        () =>
          fail(
            new StoreUnavailableError(
              'waitForSettle',
              `${this.site.store}: no answer within timeoutMs (${options.timeoutMs} ms) + operationTimeoutMs (${this.operationTimeoutMs} ms)`,
            ),
          ),
        options.timeoutMs + this.operationTimeoutMs,
      );
      options.signal?.addEventListener('abort', onAbort, { once: true });
      // LISTEN first, then read: a settle committed after the read is then always notified. If
      // opening the connection hangs (no connect timeout on the pool), read and poll meanwhile.
      let listenWait: NodeJS.Timeout | undefined;
      void Promise.race([
        this.listener.ensureListening(),
        new Promise<void>((resolveWait) => {
          listenWait = setTimeout(resolveWait, Math.min(listenWaitMs, this.operationTimeoutMs));
        }),
      ]).then(() => {
        clearTimeout(listenWait);
        void check();
      });
    });
  }

  /**
   * Closes what the store opened: the LISTEN connection (pending waiters resolve `settled`) and
   * waits for a background cleanup in flight. The pool is the caller's and is left open.
   * Afterwards every operation throws `StoreUnavailableError`.
   */
  async close(): Promise<void> {
    this.isClosed = true;
    await this.listener.close();
    await this.backgroundCleanup;
  }

  /** Connections opened for LISTEN so far (one per store unless it had to reconnect). */
  get listenConnectionsOpened(): number {
    return this.listener.connectionsOpened;
  }

  private afterClaim(): void {
    const settings = this.autoCleanup;
    if (settings === undefined || this.backgroundCleanup !== undefined || this.isClosed) return;
    this.claimsSinceCleanup += 1;
    const due =
      this.claimsSinceCleanup >= settings.everyClaims ||
      Date.now() - this.lastCleanupAtMs >= settings.intervalMs;
    if (!due) return;
    this.claimsSinceCleanup = 0;
    this.lastCleanupAtMs = Date.now();
    this.backgroundCleanup = this.cleanup({ limit: settings.limit })
      .then(
        () => undefined,
        (error: unknown) => this.onBackgroundError(error),
      )
      .finally(() => {
        this.backgroundCleanup = undefined;
      });
  }

  private assertOpen(operation: string): void {
    if (this.isClosed) throw new StoreUnavailableError(operation, `${this.site.store}: the store is closed`);
  }

  private async query(operation: string, text: string, values: unknown[]): Promise<QueryResultLike> {
    this.assertOpen(operation);
    try {
      return await this.withDeadline(operation, this.send(text, values));
    } catch (error) {
      throw toStoreError(operation, error, this.site);
    }
  }

  /** One statement: named when prepared statements are on, with pg's `query_timeout` for pg. */
  private async send(text: string, values: unknown[]): Promise<QueryResultLike> {
    const name = this.prepared ? this.statementNames.get(text) : undefined;
    if (!this.pgQueryable && name === undefined) return this.pool.query(text, values);
    const config = {
      ...(name === undefined ? {} : { name }),
      text,
      values,
      // pg fails the statement at this deadline and pg's Pool then destroys the connection
      // (release(err)) instead of handing a connection with a statement in flight to the next call.
      ...(this.pgQueryable ? { query_timeout: this.operationTimeoutMs } : {}),
    };
    const queryConfig = (this.pool as { query(config: object): Promise<QueryResultLike> }).query.bind(
      this.pool,
    );
    try {
      return await queryConfig(config);
    } catch (error) {
      if (name === undefined || !isUnknownPreparedStatement(error)) throw error;
      // The server lost (or never kept) what this connection prepared: nothing ran. From now
      // on every statement is sent unnamed.
      this.prepared = false;
      const { name: _name, ...unnamed } = config as typeof config & { name?: string };
      return this.pgQueryable ? await queryConfig(unnamed) : await this.pool.query(text, values);
    }
  }

  /**
   * Rejects with `StoreUnavailableError` when `pending` has not settled `operationTimeoutMs` after
   * this call (rule S5). `onLate` gets a value that arrives after the deadline (a pool checkout
   * that completed too late is destroyed, not leaked).
   */
  private withDeadline<T>(operation: string, pending: Promise<T>, onLate?: (value: T) => void): Promise<T> {
    const timeoutMs = this.operationTimeoutMs;
    return new Promise<T>((resolve, reject) => {
      let expired = false;
      const timer = setTimeout(() => {
        expired = true;
        reject(
          new StoreUnavailableError(
            operation,
            `${this.site.store}: no answer within operationTimeoutMs (${timeoutMs} ms)`,
          ),
        );
      }, timeoutMs);
      pending.then(
        (value) => {
          clearTimeout(timer);
          if (expired) onLate?.(value);
          else resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          if (!expired) reject(error);
        },
      );
    });
  }

  private async queryOne(operation: string, text: string, values: unknown[]): Promise<Row | undefined> {
    const result = await this.query(operation, text, values);
    return result.rows[0] as Row | undefined;
  }
}

function isPgPool(pool: unknown): pool is Pick<Pool, 'connect'> {
  return (
    typeof (pool as Partial<Pool>).connect === 'function' &&
    typeof (pool as Partial<PoolClient>).release !== 'function' &&
    typeof pool === 'object' &&
    pool !== null &&
    'totalCount' in pool
  );
}

/** pg's `Pool`, `Client` or `PoolClient`: they take `{ name, text, values }`. */
function isPgQueryable(pool: unknown): boolean {
  return (
    isPgPool(pool) ||
    (typeof pool === 'object' &&
      pool !== null &&
      typeof (pool as Partial<PoolClient>).connect === 'function' &&
      'connectionParameters' in pool)
  );
}

/**
 * 26000 (invalid_sql_statement_name: the server has no statement of that name, e.g. behind a
 * transaction pooler that does not track prepared statements, or after DISCARD ALL) and 42P05
 * (duplicate_prepared_statement). Both are raised before the statement executes.
 */
function isUnknownPreparedStatement(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || code === '42P05';
}

function isConnectionLevel(error: unknown): boolean {
  return StoreUnavailableError.isInstance(toStoreError('ensureSchema', error, { store: '', table: '' }));
}

function unquotedSchema(names: PostgresNames): string {
  return names.schema.slice(1, -1).replaceAll('""', '"');
}

/** Same digest the NOTIFY trigger sends: SHA-256 of UTF-8 tenant, a NUL byte, UTF-8 key. */
function recordDigest(ref: RecordRef): string {
  return createHash('sha256')
    .update(Buffer.from(ref.tenant, 'utf8'))
    .update(Buffer.from([0]))
    .update(Buffer.from(ref.key, 'utf8'))
    .digest('hex');
}

/**
 * How an outcome is written (migration 0003): as text unless it holds NUL, which a PostgreSQL text
 * value cannot; then as its UTF-8 bytes. A well-formed string round-trips through UTF-8 exactly.
 */
function storedOutcome(outcome: string): { text: string | null; bytes: Buffer | null } {
  return outcome.includes('\u0000')
    ? { text: null, bytes: Buffer.from(outcome, 'utf8') }
    : { text: outcome, bytes: null };
}

/** The outcome of a completed row: `outcome` when set (see 0003_outcome_bytes.sql), else the bytes. */
function readOutcome(row: Row): string | undefined {
  if (row.state !== 'completed') return undefined;
  if (row.outcome !== null && row.outcome !== undefined) return String(row.outcome);
  const bytes = row.outcome_bytes;
  if (Buffer.isBuffer(bytes)) return bytes.toString('utf8');
  return undefined;
}

/**
 * `host:port/database` of a pg `Pool`, `Client` or `PoolClient`, for error messages: never the
 * user or the password (rule S5). A queryable of your own is `a custom queryable`.
 */
function describeAddress(pool: unknown): string {
  const source = pool as {
    options?: Record<string, unknown>;
    connectionParameters?: Record<string, unknown>;
  } | null;
  const settings = source?.connectionParameters ?? source?.options;
  if (settings === undefined || typeof settings !== 'object') return 'a custom queryable';
  let host = settings.host as string | undefined;
  let port = settings.port as number | string | undefined;
  let database = settings.database as string | undefined;
  const connectionString = settings.connectionString;
  if (typeof connectionString === 'string') {
    try {
      const url = new URL(connectionString);
      host = decodeURIComponent(url.hostname) || host;
      port = url.port || port;
      database = decodeURIComponent(url.pathname.slice(1)) || database;
    } catch {
      // Not a URL (a key=value string): fall back to the separate settings.
    }
  }
  host ||= process.env.PGHOST || 'localhost';
  port ||= process.env.PGPORT || 5432;
  database ||= process.env.PGDATABASE || '(default database)';
  return `${host}:${port}/${database}`;
}

function toRecord(row: Row): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: String(row.key),
    tenant: String(row.tenant),
    tool: String(row.tool),
    fingerprint: String(row.fingerprint),
    state: row.state as RecordState,
    fence: Number(row.fence),
    attempt: Number(row.attempt),
    owner: String(row.owner),
    leaseExpiresAtMs: Number(row.lease_expires_at_ms),
    expiresAtMs: Number(row.expires_at_ms),
  };
  const outcome = readOutcome(row);
  if (outcome !== undefined) record.outcome = outcome;
  if (row.error_type !== null && row.error_type !== undefined) {
    record.error = { type: String(row.error_type), message: String(row.error_message ?? '') };
  }
  return { ...record, ...operatorFieldsOf(row) }; // [#20 listing]
}
