// The store contract's types, as `contract.X` (docs/store-contract.md in @toolfence/core).
import type * as contract from '@toolfence/core/store';
import {
  checkListOptions,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkTenant,
  checkWaitOptions,
} from '@toolfence/core/store';
import { checkInput } from '../shared/operation-input.js';
import { AutoCleanup } from './auto-cleanup.js';
import { StatementRunner } from './backend.js';
import { claimResult, claimRow } from './claim.js';
import { ensureSchema } from './ensure-schema.js';
import type { FailureSite } from './errors.js';
import { completeRecord, markRecordIndeterminate, releaseRecord, renewLease } from './holder-writes.js';
import { type PostgresNames, postgresNames, validateIdentifier } from './names.js';
import { getRecord, listRecords, readResolutions } from './operator-reads.js';
import { decideRecord, deleteExpired, forgetTenant, resolveRecord } from './operator-writes.js';
import type {
  EnsureSchemaOptions,
  EnsureSchemaResult,
  PostgresQueryable,
  PostgresStoreOptions,
} from './options.js';
import { describeAddress, isPgPool, isPgQueryable } from './pg-connections.js';
import { type PostgresListenConnection, SettleListener } from './settle-signal.js';
import { waitForSettle } from './settle-wait.js';

export type {
  EnsureSchemaOptions,
  EnsureSchemaResult,
  MigrationProgress,
  PostgresAutoCleanupOptions,
  PostgresQueryable,
  PostgresQueryConfig,
  PostgresStoreOptions,
} from './options.js';
export type { PostgresListenConnection } from './settle-signal.js';

const defaultOperationTimeoutMs = 5_000;

/** What a LISTEN client emits between the hand-over and the listener's own 'error' listener: its LISTEN then fails. */
const ignoreClientError = (): void => undefined;

/**
 * The LISTEN connection of a store on a pg `Pool`: a `Client` of its own, made as the pool makes
 * its clients (`new pool.Client(pool.options)`, the same settings and credentials), never one of
 * the pool's. Held for the store's life, a pooled client took a slot for good: with `max: 1`
 * every claim after the first wait timed out. Its 'error' listener goes on
 * before it connects, so a FATAL during the connect or before the listener's own listener is
 * attached is never an unhandled 'error' event.
 */
async function openOwnListenClient(pool: unknown): Promise<PostgresListenConnection> {
  const { Client, options } = pool as unknown as {
    Client: new (
      config: unknown,
    ) => PostgresListenConnection & { connect(): Promise<void>; end(): Promise<void> };
    options: unknown;
  };
  const client = new Client(options);
  client.on('error', ignoreClientError);
  try {
    await client.connect();
  } catch (error) {
    void client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

function checkOperationTimeoutMs(value: number | undefined): number {
  const timeoutMs = value ?? defaultOperationTimeoutMs;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 2_147_483_647) {
    throw new RangeError(
      `PostgresStore: operationTimeoutMs must be a whole number of milliseconds in 1..2147483647, got ${String(value)}`,
    );
  }
  return timeoutMs;
}

/**
 * An {@link IdempotencyStore} on PostgreSQL (node-postgres `pg`, an optional peer dependency).
 *
 * - Every ownership decision (claim, renew, complete, release, markIndeterminate, resolve) is
 *   ONE SQL statement, correct under READ COMMITTED with concurrent callers: a claim (the claim
 *   function of migration 0005) answers a conflict, a settled record or a busy one from a
 *   snapshot read without writing, and otherwise runs an `INSERT ... ON CONFLICT DO UPDATE` that
 *   locks the row and decides on its latest version;
 *   a holder operation changes the row with the holder check in its UPDATE/DELETE's WHERE (only
 *   a matching holder locks it) and answers a refused holder from the same statement's snapshot
 *   read; when a concurrent writer changed the row between that snapshot and the lock, the
 *   statement decides nothing and a second, locking statement decides (statements/fragments/row-seen.sql).
 *   Leases are rows, not session locks, so a claim on one pooled connection and a
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
export class PostgresStore implements contract.IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  private readonly pool: PostgresQueryable;
  private readonly names: PostgresNames;
  /** `PostgresStore at host:port/database` (never credentials) and the table, for messages. */
  private readonly site: FailureSite;
  private readonly runner: StatementRunner;
  private readonly listener: SettleListener;
  private readonly autoCleanup: AutoCleanup;
  private readonly pollIntervalMs: number;
  private readonly safetyPollMs: number;
  /** The deadline of one operation in ms (rule S5); the guard bounds its steps by it (`storeStepTimeoutMs`). */
  readonly operationTimeoutMs: number;

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
    const pool = options.pool;
    this.pool = pool;
    this.operationTimeoutMs = checkOperationTimeoutMs(options.operationTimeoutMs);
    const pgQueryable = isPgQueryable(pool);
    const schema = validateIdentifier('schema', options.schema ?? 'toolfence');
    const table = validateIdentifier('table', options.table ?? 'idempotency_records');
    this.names = postgresNames(schema, table);
    this.site = { store: `PostgresStore at ${describeAddress(pool)}`, table: this.names.table };
    this.runner = new StatementRunner({
      pool,
      names: this.names,
      site: this.site,
      operationTimeoutMs: this.operationTimeoutMs,
      pgQueryable,
      preparedStatements: options.preparedStatements ?? pgQueryable,
    });
    const onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.autoCleanup = new AutoCleanup(
      options.autoCleanup,
      (limit) => this.cleanup({ limit }),
      (error) => onBackgroundError(error),
      () => this.runner.isClosed,
    );
    this.pollIntervalMs = options.pollIntervalMs ?? 100;
    this.safetyPollMs = options.safetyPollMs ?? 5_000;
    const openListenConnection =
      options.listenClient ?? (isPgPool(pool) ? () => openOwnListenClient(pool) : undefined);
    this.listener = new SettleListener(
      openListenConnection,
      this.names.channel,
      (error) => onBackgroundError(error),
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
   * `<table>_migrations` table, each in its own transaction, under a session-level advisory lock
   * (`pg_advisory_lock`) held on one connection for the whole call, so any number of processes
   * may call it at once: one applies, the others wait and find nothing to do. A migration's online
   * steps (a batched backfill, `CREATE INDEX CONCURRENTLY`) run after its transaction without
   * blocking the claims of running stores, and an interrupted migration resumes on the next call
   * (docs/postgres.md, "Migrations"; `toolfence migrate` runs it out of band). Idempotent. Needs
   * CREATE on the database (to create the schema) or on the schema when it exists. Through
   * PgBouncer in transaction mode the lock does not hold across transactions: run it on a direct
   * connection.
   * @throws StoreUnavailableError when the database cannot be reached within `operationTimeoutMs`
   *   (the checkout) or the call outlasts `options.timeoutMs`; StoreConfigurationError when it
   *   refuses (a privilege); RangeError on bad options.
   */
  async ensureSchema(options: EnsureSchemaOptions = {}): Promise<EnsureSchemaResult> {
    return ensureSchema(
      { pool: this.pool, names: this.names, runner: this.runner, site: this.site },
      options,
    );
  }

  /** {@inheritDoc IdempotencyStore.claim} */
  async claim(ref: contract.RecordRef, options: contract.ClaimOptions): Promise<contract.ClaimResult> {
    checkInput.claim(ref, options);
    const row = await claimRow(this.runner, ref, options);
    this.autoCleanup.afterClaim();
    return claimResult(row, options);
  }

  /** {@inheritDoc IdempotencyStore.renew} */
  async renew(
    ref: contract.RecordRef,
    holder: contract.Holder,
    leaseMs: number,
  ): Promise<contract.RenewResult> {
    checkInput.renew(ref, holder, leaseMs);
    return renewLease(this.runner, ref, holder, leaseMs);
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(
    ref: contract.RecordRef,
    holder: contract.Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<contract.CompleteResult> {
    checkInput.complete(ref, holder, outcome, retentionMs);
    return completeRecord(this.runner, ref, holder, outcome, retentionMs);
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(ref: contract.RecordRef, holder: contract.Holder): Promise<contract.ReleaseResult> {
    checkInput.release(ref, holder);
    return releaseRecord(this.runner, ref, holder);
  }

  /** {@inheritDoc IdempotencyStore.markIndeterminate} */
  async markIndeterminate(
    ref: contract.RecordRef,
    holder: contract.Holder,
    error: contract.RecordedError,
    retentionMs: number,
  ): Promise<contract.MarkIndeterminateResult> {
    checkInput.markIndeterminate(ref, holder, error, retentionMs);
    return markRecordIndeterminate(this.runner, ref, holder, error, retentionMs);
  }

  /** {@inheritDoc IdempotencyStore.get} */
  async get(ref: contract.RecordRef): Promise<contract.IdempotencyRecord | null> {
    checkRecordRef(ref);
    return getRecord(this.runner, ref);
  }

  /** {@inheritDoc IdempotencyStore.resolve} */
  async resolve(
    ref: contract.RecordRef,
    resolution: contract.Resolution,
    retentionMs: number,
  ): Promise<contract.ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    checkRetentionMs(retentionMs);
    return resolveRecord(this.runner, ref, resolution, retentionMs);
  }

  /**
   * An operator's decision on one call (docs/store-contract.md, "Approvals"): one statement
   * (statements/decide.sql; decide-expected.sql with `expect`) under the row lock, so a claim
   * consuming the approval and a denial are serialised. Needs migration 0010.
   * @throws StoreInputError, StoreUnavailableError
   */
  async decideApproval(
    ref: contract.RecordRef,
    decision: contract.ApprovalDecision,
    retentionMs: number,
  ): Promise<contract.DecideResult> {
    checkInput.decideApproval(ref, decision, retentionMs);
    return decideRecord(this.runner, ref, decision, retentionMs);
  }

  /** {@inheritDoc IdempotencyStore.list} */
  async list(options: contract.ListOptions): Promise<contract.ListPage> {
    checkListOptions(options);
    return listRecords(this.runner, options);
  }

  /** {@inheritDoc IdempotencyStore.resolutions} */
  async resolutions(ref: contract.RecordRef): Promise<readonly contract.ResolutionEntry[]> {
    checkRecordRef(ref);
    return readResolutions(this.runner, ref);
  }

  /**
   * {@inheritDoc IdempotencyStore.forget}
   * Rows of the tenant past retention are deleted too but not counted.
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    checkTenant(options?.tenant);
    return forgetTenant(this.runner, options.tenant);
  }

  /**
   * Deletes at most `limit` rows (default 1000) past their retention deadline, in one bounded
   * statement, and returns how many it deleted: expired records first, then, with what is left of
   * `limit`, expired resolution entries (statements/cleanup.sql). Call it in a loop until it returns less than
   * `limit` to drain a backlog. Expired rows are already ignored by every other operation; this
   * only reclaims space. Also run in the background, see {@link PostgresStoreOptions.autoCleanup}.
   * @throws StoreUnavailableError
   */
  async cleanup(options: { readonly limit?: number } = {}): Promise<number> {
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1) {
      throw new RangeError('PostgresStore.cleanup: limit must be an integer >= 1');
    }
    return deleteExpired(this.runner, limit);
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
  async waitForSettle(ref: contract.RecordRef, options: contract.WaitOptions): Promise<contract.WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    this.runner.assertOpen('waitForSettle');
    if (options.signal?.aborted) throw options.signal.reason;
    const context = {
      runner: this.runner,
      listener: this.listener,
      store: this.site.store,
      pollIntervalMs: this.pollIntervalMs,
      safetyPollMs: this.safetyPollMs,
      operationTimeoutMs: this.operationTimeoutMs,
    };
    return waitForSettle(context, ref, options);
  }

  /**
   * Closes what the store opened: the LISTEN connection (pending waiters resolve `settled`) and
   * waits for a background cleanup in flight. The pool is the caller's and is left open.
   * Afterwards every operation throws `StoreUnavailableError`.
   */
  async close(): Promise<void> {
    this.runner.close();
    await this.listener.close();
    await this.autoCleanup.settled();
  }

  /** Connections opened for LISTEN so far (one per store unless it had to reconnect). */
  get listenConnectionsOpened(): number {
    return this.listener.connectionsOpened;
  }
}
