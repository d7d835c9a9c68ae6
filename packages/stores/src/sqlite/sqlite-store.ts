import { realpathSync } from 'node:fs';
import type {
  ClaimOptions,
  ClaimResult,
  Clock,
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
  checkListOptions,
  checkOutcome,
  checkRecordedError,
  checkRecordRef,
  checkResolutionAudit,
  checkRetentionMs,
  MAX_TIMER_MS,
  StoreConfigurationError,
  StoreInputError,
  StoreUnavailableError,
  ToolfenceError,
} from '@toolfence/core';
import Database from 'better-sqlite3';
import { migrations, statements } from './generated-sql.js';
import {
  callInfo,
  journalRow,
  listSqlite,
  operatorFieldsOf,
  resolutionEntryOf,
  resolutionsSqlite,
  takeoverInfo,
} from './listing.js';
import { ChangeSignal, type LocalSettles, localSettlesFor, type SettleWaiter } from './settle-signal.js';

export interface SQLiteStoreOptions {
  /**
   * Path of the database file, created if missing (its directory must exist). Every process that
   * shares records opens the same file, on a LOCAL filesystem of one host: never on NFS, SMB or
   * another network filesystem (SQLite's locks and WAL's shared memory do not work there).
   */
  readonly path: string;
  /** Name of the records table. Default `"toolfence_records"`. Any name without NUL; always quoted. */
  readonly table?: string;
  /**
   * Longest an operation waits for another connection's write lock before it rejects with
   * `StoreUnavailableError` naming the operation. Default 5000. The wait is asynchronous (retries
   * 1 ms doubling to 16 ms, jittered), so it does not block the event loop: only the transaction
   * itself does. With transactions of tens of microseconds (hundreds with `synchronous: 'full'`)
   * it is normally short; it is long when a process holding the lock is stopped (SIGSTOP, a
   * debugger) in the middle of one.
   */
  readonly busyTimeoutMs?: number;
  /**
   * `'full'` (default): every commit is on disk (fsync of the WAL) before the call returns, so a
   * power loss or OS crash keeps every answered claim. `'normal'`: WAL commits are synced at
   * checkpoints only; a process crash loses nothing, a power loss or OS crash can lose the last
   * commits (a lost claim lets a retry run the body again).
   */
  readonly synchronous?: 'full' | 'normal';
  /**
   * While waiters wait, re-check for other processes' commits this often even without a file
   * event (ms). Default 250. Without a working watch (see `watchWal`), checks start at 5 ms after
   * each change and double up to this period.
   */
  readonly pollIntervalMs?: number;
  /**
   * Watch the `-wal` file (fs.watch: inotify on Linux, FSEvents on macOS) to hear of other
   * processes' commits within about a millisecond. Default `true`; `false` polls instead.
   */
  readonly watchWal?: boolean;
  /** Clock for leases and retention. Default `Date` (the host clock). Inject one to test time. */
  readonly clock?: Clock;
  /** Failures of background work (the change signal). Default: ignored. */
  readonly onBackgroundError?: (error: unknown) => void;
}

/** Result of {@link SQLiteStore.ensureSchema}. */
export interface SQLiteEnsureSchemaResult {
  /** Versions of the migrations this call applied (empty when the schema was up to date). */
  readonly applied: readonly number[];
}

interface RecordRow {
  tenant: string;
  key: string;
  tool: string;
  fingerprint: string;
  state: RecordState;
  fence: number;
  attempt: number;
  owner: string;
  lease_expires_at_ms: number;
  expires_at_ms: number;
  retention_ms: number;
  outcome: string | null;
  error_type: string | null;
  error_message: string | null;
  // [#20 listing]
  run_id: string | null;
  call_id: string | null;
  description: string | null;
  claimed_at_ms: number | null;
  updated_at_ms: number;
  /** The resolution entry as JSON. */
  resolution: string | null;
}

type StatementName = keyof typeof statements;

interface Connection {
  readonly db: Database.Database;
  readonly file: string;
  readonly local: LocalSettles;
  readonly signal: ChangeSignal;
  readonly statements: Map<StatementName, Database.Statement>;
  readonly immediate: (work: () => unknown) => unknown;
}

/** How many expired rows each claim and complete deletes (an incremental sweep, as MemoryStore does). */
const SWEEP_PER_WRITE = 4;
const STORE = 'SQLiteStore';

/**
 * An {@link IdempotencyStore} in one SQLite file (better-sqlite3, an optional peer dependency):
 * durable records on ONE host, shared by every process that opens the file.
 *
 * - The file is in WAL mode. Every ownership decision (claim, renew, complete, release,
 *   markIndeterminate, resolve, forget) is one `BEGIN IMMEDIATE` transaction: it takes the
 *   database's write lock first, then reads the clock and the row, decides exactly as
 *   `MemoryStore` does, writes and commits. Decisions of all processes are serialised by that lock.
 * - The clock is the host clock (`Date.now()`), read inside the transaction; every process on one
 *   host reads the same clock.
 * - better-sqlite3 is synchronous: each call blocks the event loop for its own transaction (tens
 *   to hundreds of microseconds; docs/sqlite.md has measurements). Waiting for another process's
 *   write lock does not block it (asynchronous retries, up to `busyTimeoutMs`).
 * - {@link waitForSettle} is woken directly by a settle in this process, and by a change signal
 *   (`-wal` file watch + `PRAGMA data_version`) for other processes.
 *
 * Create the table first with {@link ensureSchema}.
 *
 * ```ts
 * import { SQLiteStore } from '@toolfence/stores/sqlite';
 * const store = new SQLiteStore({ path: '/var/lib/myapp/toolfence.db' });
 * await store.ensureSchema();
 * ```
 */
export class SQLiteStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  readonly path: string;
  private readonly table: string;
  private readonly sql: { readonly [K in StatementName]: string };
  private readonly migrationsTable: string;
  private readonly placeholders: Readonly<Record<string, string>>;
  private readonly busyTimeoutMs: number;
  private readonly synchronous: 'full' | 'normal';
  private readonly pollIntervalMs: number;
  private readonly watchWal: boolean;
  private readonly clock: Clock;
  private readonly onBackgroundError: (error: unknown) => void;
  private connection: Connection | undefined;
  private readonly waiters = new Set<() => void>();
  private isClosed = false;

  /** @throws TypeError when an option cannot be used. Opens nothing: the file is opened on first use. */
  constructor(options: SQLiteStoreOptions) {
    const path = options?.path;
    if (typeof path !== 'string' || path === '' || path.includes('\u0000')) {
      throw new TypeError('SQLiteStore: `path` must be a non-empty file path without NUL');
    }
    if (path === ':memory:' || path.startsWith('file::memory:')) {
      throw new TypeError(
        'SQLiteStore: an in-memory database is private to one connection; use MemoryStore for that',
      );
    }
    const table = options.table ?? 'toolfence_records';
    if (typeof table !== 'string' || table === '' || table.includes('\u0000')) {
      throw new TypeError('SQLiteStore: `table` must be a non-empty name without NUL');
    }
    this.busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
    if (
      !Number.isSafeInteger(this.busyTimeoutMs) ||
      this.busyTimeoutMs < 0 ||
      this.busyTimeoutMs > MAX_TIMER_MS
    ) {
      throw new TypeError('SQLiteStore: `busyTimeoutMs` must be a whole number of milliseconds >= 0');
    }
    this.synchronous = options.synchronous ?? 'full';
    if (this.synchronous !== 'full' && this.synchronous !== 'normal') {
      throw new TypeError("SQLiteStore: `synchronous` must be 'full' or 'normal'");
    }
    this.pollIntervalMs = options.pollIntervalMs ?? 250;
    if (!Number.isSafeInteger(this.pollIntervalMs) || this.pollIntervalMs < 1) {
      throw new TypeError('SQLiteStore: `pollIntervalMs` must be a whole number of milliseconds >= 1');
    }
    this.watchWal = options.watchWal ?? true;
    this.path = path;
    this.table = table;
    this.clock = options.clock ?? Date;
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.migrationsTable = quoteIdentifier(`${table}_migrations`);
    this.placeholders = {
      table: quoteIdentifier(table),
      migrations_table: this.migrationsTable,
      expires_index: quoteIdentifier(`${table}_expires_at_ms`),
      // [#20 listing]
      resolutions_table: quoteIdentifier(`${table}_resolutions`),
      list_tenant_index: quoteIdentifier(`${table}_list_tenant`),
      list_all_index: quoteIdentifier(`${table}_list_all`),
      resolutions_index: quoteIdentifier(`${table}_resolutions_key`),
    };
    this.sql = Object.fromEntries(
      Object.entries(statements).map(([name, text]) => [name, render(text, this.placeholders)]),
    ) as { [K in StatementName]: string };
  }

  /** The quoted name of the records table. */
  get tableName(): string {
    return this.placeholders.table as string;
  }

  /**
   * Creates or upgrades the table: applies, in order, every migration not yet recorded in the
   * `<table>_migrations` table, in one `BEGIN IMMEDIATE` transaction, so any number of processes
   * may call it at once: one applies, the others wait for the lock (up to `busyTimeoutMs`) and
   * find nothing to do. Idempotent.
   * @throws StoreUnavailableError when the file cannot be opened or stays locked.
   */
  async ensureSchema(): Promise<SQLiteEnsureSchemaResult> {
    const applied = await this.withLock('ensureSchema', (connection) => {
      const versions = connection.immediate(() => {
        connection.db.exec(this.sql.ensureMigrationsTable);
        const done = new Set(
          (
            connection.db.prepare(`SELECT version FROM ${this.migrationsTable}`).all() as {
              version: number;
            }[]
          ).map((row) => row.version),
        );
        const appliedNow: number[] = [];
        for (const migration of migrations) {
          if (done.has(migration.version)) continue;
          connection.db.exec(render(migration.text, this.placeholders));
          connection.db
            .prepare(`INSERT INTO ${this.migrationsTable} (version, name, applied_at_ms) VALUES (?, ?, ?)`)
            .run(migration.version, migration.name, Date.now());
          appliedNow.push(migration.version);
        }
        return appliedNow;
      }) as number[];
      // Statements that failed to prepare before the table existed are prepared again on use.
      connection.statements.clear();
      return versions;
    });
    return { applied };
  }

  /** {@inheritDoc IdempotencyStore.claim} */
  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    checkRecordRef(ref);
    checkClaimOptions(options);
    const { result, settled } = await this.decide('claim', (now) => {
      this.sweep(now);
      const row = this.liveRow(ref, now);
      if (row === undefined) {
        const leaseExpiresAtMs = now + options.leaseMs;
        this.run('insertRecord', [
          ref.tenant,
          ref.key,
          options.tool,
          options.fingerprint,
          options.owner,
          leaseExpiresAtMs,
          leaseExpiresAtMs + options.retentionMs,
          options.retentionMs,
          ...callInfo(options), // [#20 listing]
          now,
          now,
        ]);
        return {
          result: {
            status: 'acquired',
            fence: 1,
            attempt: 1,
            leaseExpiresAtMs,
            takeover: false,
          } as ClaimResult,
        };
      }
      if (
        row.tool !== options.tool ||
        (options.checkFingerprint && row.fingerprint !== options.fingerprint)
      ) {
        return { result: { status: 'conflict', record: toRecord(row) } as ClaimResult };
      }
      if (row.state === 'in_progress' && row.owner === options.owner) {
        // The holder asking again (a resent request whose reply was lost): answer as the first
        // time, with the lease restarted, since the claimer never got the first answer.
        const leaseExpiresAtMs = Math.max(row.lease_expires_at_ms, now + options.leaseMs);
        const expiresAtMs = Math.max(row.expires_at_ms, leaseExpiresAtMs + options.retentionMs);
        if (leaseExpiresAtMs !== row.lease_expires_at_ms || expiresAtMs !== row.expires_at_ms) {
          this.write({ ...row, lease_expires_at_ms: leaseExpiresAtMs, expires_at_ms: expiresAtMs });
        }
        return {
          result: {
            status: 'acquired',
            fence: row.fence,
            attempt: row.attempt,
            leaseExpiresAtMs,
            takeover: row.attempt > 1,
          } as ClaimResult,
        };
      }
      switch (row.state) {
        case 'completed':
          return { result: { status: 'completed', record: toRecord(row) } as ClaimResult };
        case 'indeterminate':
          return { result: { status: 'indeterminate', record: toRecord(row) } as ClaimResult };
        case 'abandoned':
          return { result: { status: 'abandoned', record: toRecord(row) } as ClaimResult };
        case 'in_progress':
          break;
      }
      if (row.lease_expires_at_ms > now) {
        return { result: { status: 'busy', record: toRecord(row), nowMs: now } as ClaimResult };
      }
      if (options.mode === 'at-most-once' || row.attempt >= options.maxAttempts) {
        const state = options.mode === 'at-most-once' ? 'indeterminate' : 'abandoned';
        const error =
          state === 'indeterminate'
            ? leaseExpiredError(row.attempt)
            : attemptsLostError(row.attempt, options.maxAttempts);
        const changed: RecordRow = {
          ...row,
          state,
          error_type: error.type,
          error_message: error.message,
          expires_at_ms: now + options.retentionMs,
          updated_at_ms: now, // [#20 listing]
        };
        this.write(changed);
        return { result: { status: state, record: toRecord(changed) } as ClaimResult, settled: true };
      }
      const leaseExpiresAtMs = now + options.leaseMs;
      this.write({
        ...row,
        fence: row.fence + 1,
        attempt: row.attempt + 1,
        owner: options.owner,
        lease_expires_at_ms: leaseExpiresAtMs,
        expires_at_ms: leaseExpiresAtMs + options.retentionMs,
        retention_ms: options.retentionMs,
        ...takeoverInfo(options, now), // [#20 listing]
      });
      return {
        result: {
          status: 'acquired',
          fence: row.fence + 1,
          attempt: row.attempt + 1,
          leaseExpiresAtMs,
          takeover: true,
        } as ClaimResult,
      };
    });
    if (settled) this.notify(ref);
    return result;
  }

  /** {@inheritDoc IdempotencyStore.renew} */
  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkLeaseMs(leaseMs);
    return (
      await this.decide('renew', (now) => {
        const row = this.liveRow(ref, now);
        if (row === undefined) return { result: { status: 'lost', reason: 'not_found' } as RenewResult };
        if (!isHolder(row, holder)) return { result: { status: 'lost', reason: 'stale' } as RenewResult };
        if (row.state !== 'in_progress')
          return { result: { status: 'lost', reason: 'settled' } as RenewResult };
        const leaseExpiresAtMs = now + leaseMs;
        // A live claim outlives its lease by a full retention window (as every store).
        const expiresAtMs = Math.max(row.expires_at_ms, leaseExpiresAtMs + row.retention_ms);
        this.write({ ...row, lease_expires_at_ms: leaseExpiresAtMs, expires_at_ms: expiresAtMs });
        return { result: { status: 'renewed', leaseExpiresAtMs } as RenewResult };
      })
    ).result;
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
    const { result, settled } = await this.decide('complete', (now) => {
      this.sweep(now);
      const row = this.liveRow(ref, now);
      if (row === undefined) return { result: { status: 'not_found' } as CompleteResult };
      if (!isHolder(row, holder) || row.state === 'completed') {
        return { result: { status: 'stale', record: toRecord(row) } as CompleteResult };
      }
      this.write({
        ...row,
        state: 'completed',
        outcome,
        error_type: null,
        error_message: null,
        expires_at_ms: now + retentionMs,
        updated_at_ms: now, // [#20 listing]
      });
      return { result: { status: 'completed' } as CompleteResult, settled: true };
    });
    if (settled) this.notify(ref);
    return result;
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    const { result, settled } = await this.decide('release', (now) => {
      const row = this.liveRow(ref, now);
      if (row === undefined) return { result: { status: 'not_found' } as ReleaseResult };
      if (!isHolder(row, holder) || row.state !== 'in_progress') {
        return { result: { status: 'stale', record: toRecord(row) } as ReleaseResult };
      }
      this.run('deleteRecord', [ref.tenant, ref.key]);
      return { result: { status: 'released' } as ReleaseResult, settled: true };
    });
    if (settled) this.notify(ref);
    return result;
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
    const { result, settled } = await this.decide('markIndeterminate', (now) => {
      const row = this.liveRow(ref, now);
      if (row === undefined) return { result: { status: 'not_found' } as MarkIndeterminateResult };
      if (!isHolder(row, holder) || row.state !== 'in_progress') {
        return { result: { status: 'stale', record: toRecord(row) } as MarkIndeterminateResult };
      }
      this.write({
        ...row,
        state: 'indeterminate',
        error_type: error.type,
        error_message: error.message,
        expires_at_ms: now + retentionMs,
        updated_at_ms: now, // [#20 listing]
      });
      return { result: { status: 'marked' } as MarkIndeterminateResult, settled: true };
    });
    if (settled) this.notify(ref);
    return result;
  }

  /** {@inheritDoc IdempotencyStore.get} */
  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    checkRecordRef(ref);
    const row = await this.read('get', ref);
    return row === undefined ? null : toRecord(row);
  }

  /** {@inheritDoc IdempotencyStore.resolve} */
  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    checkRetentionMs(retentionMs);
    const { result, settled } = await this.decide('resolve', (now) => {
      const row = this.liveRow(ref, now);
      if (row === undefined) return { result: { status: 'not_found' } as ResolveResult };
      if (row.state !== 'indeterminate' && row.state !== 'abandoned') {
        return { result: { status: 'not_resolvable', record: toRecord(row) } as ResolveResult };
      }
      // [#20 listing] the resolution entry, in this transaction
      const entry = resolutionEntryOf(row, resolution, now);
      this.run('insertResolution', journalRow(entry, now + retentionMs));
      if ('outcome' in resolution) {
        this.write({
          ...row,
          state: 'completed',
          outcome: resolution.outcome,
          error_type: null,
          error_message: null,
          expires_at_ms: now + retentionMs,
          updated_at_ms: now,
          resolution: JSON.stringify(entry),
        });
      } else {
        this.run('deleteRecord', [ref.tenant, ref.key]);
      }
      return { result: { status: 'resolved' } as ResolveResult, settled: true };
    });
    if (settled) this.notify(ref);
    return result;
  }

  /** [#20 listing] {@inheritDoc IdempotencyStore.list} */
  async list(options: ListOptions): Promise<ListPage> {
    checkListOptions(options);
    return this.withLock('list', () =>
      listSqlite((name) => this.statement(name), options, this.now(), toRecord),
    );
  }

  /** [#20 listing] {@inheritDoc IdempotencyStore.resolutions} */
  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    checkRecordRef(ref);
    return this.withLock('resolutions', () =>
      resolutionsSqlite(this.statement('selectResolutions'), ref, this.now()),
    );
  }

  /**
   * {@inheritDoc IdempotencyStore.forget}
   * Rows of the tenant past retention are deleted too but not counted.
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    if (options === null || typeof options !== 'object')
      throw new StoreInputError('forget options', 'must be an object');
    checkRecordRef({ tenant: options.tenant, key: 'k' });
    const { result } = await this.decide('forget', (now) => {
      const live = (this.statement('countLiveOfTenant').get(options.tenant, now) as { live: number }).live;
      this.run('forget', [options.tenant]);
      this.run('forgetResolutions', [options.tenant]); // [#20 listing]
      return { result: live };
    });
    this.connection?.local.notifyTenant(options.tenant);
    return result;
  }

  /**
   * Deletes at most `limit` rows (default 1000) past their retention deadline, in one transaction,
   * and returns how many it deleted. Loop until it returns less than `limit` to drain a backlog.
   * Expired rows are already ignored by every operation (and claims and completes delete a few
   * each); this only reclaims space.
   * @throws StoreUnavailableError
   */
  async cleanup(options: { readonly limit?: number } = {}): Promise<number> {
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new StoreInputError('limit', 'must be a whole number >= 1');
    return (await this.decide('cleanup', (now) => ({ result: this.run('sweep', [now, limit]).changes })))
      .result;
  }

  /**
   * {@inheritDoc IdempotencyStore.waitForSettle}
   *
   * Woken directly when a store of this process settles the record; for other processes, by the
   * change signal (a watch on the `-wal` file and `PRAGMA data_version`, re-checked every
   * `pollIntervalMs`). Wakes at the lease deadline as the store's clock counts it, and resolves
   * `lease_expired` only once a claim would no longer answer `busy` (a timer that fires early
   * re-reads and re-arms). Rejects with `signal.reason` when `signal` aborts.
   */
  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    checkRecordRef(ref);
    const timeoutMs = options?.timeoutMs;
    if (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)) {
      throw new StoreInputError(
        'timeoutMs',
        `must be a number of milliseconds >= 0, got ${String(timeoutMs)}`,
      );
    }
    // Opened synchronously when possible, so the waiter is registered before this call returns
    // (a close() right after it then wakes it).
    let connection: Connection;
    try {
      this.assertOpen('waitForSettle');
      connection = this.connect();
    } catch (error) {
      if (!isBusy(error)) throw this.toStoreError('waitForSettle', error);
      connection = await this.withLock('waitForSettle', (opened) => opened);
    }
    if (options.signal?.aborted) throw options.signal.reason;
    const id = recordId(ref);
    return new Promise<WaitResult>((resolve, reject) => {
      let finished = false;
      let leaseTimer: NodeJS.Timeout | undefined;
      const end = (): boolean => {
        if (finished) return false;
        finished = true;
        clearTimeout(leaseTimer);
        clearTimeout(timeoutTimer);
        options.signal?.removeEventListener('abort', onAbort);
        removeLocal();
        removeSignal();
        this.waiters.delete(onClose);
        return true;
      };
      const finish = (result: WaitResult): void => {
        if (end()) resolve(result);
      };
      const fail = (error: unknown): void => {
        if (end()) reject(error);
      };
      const onAbort = (): void => fail(options.signal?.reason);
      const onClose = (): void => finish('settled');
      let checking = false;
      let recheck = false;
      const check = (): void => {
        if (finished) return;
        if (checking) {
          recheck = true;
          return;
        }
        checking = true;
        clearTimeout(leaseTimer);
        void this.withLock('waitForSettle', () => {
          const now = this.now();
          return { now, row: this.liveRow(ref, now) };
        })
          .then(
            ({ now, row }) => {
              if (row === undefined || row.state !== 'in_progress') {
                finish('settled');
                return;
              }
              // Judged exactly as claim judges it: busy while lease_expires_at_ms > now.
              if (row.lease_expires_at_ms <= now) {
                finish('lease_expired');
                return;
              }
              if (!finished) {
                leaseTimer = setTimeout(check, Math.min(row.lease_expires_at_ms - now, MAX_TIMER_MS));
              }
            },
            (error: unknown) => (this.isClosed ? finish('settled') : fail(error)),
          )
          .finally(() => {
            checking = false;
            if (recheck && !finished) {
              recheck = false;
              check();
            }
          });
      };
      const waiter: SettleWaiter = { tenant: ref.tenant, settled: () => finish('settled'), changed: check };
      // Registered before the first read, so neither a settle here nor one elsewhere is missed.
      const removeLocal = connection.local.add(id, waiter);
      let removeSignal: () => void = () => undefined;
      try {
        removeSignal = connection.signal.add(waiter);
      } catch (error) {
        removeLocal();
        reject(this.toStoreError('waitForSettle', error));
        return;
      }
      this.waiters.add(onClose);
      const timeoutTimer = setTimeout(() => finish('timeout'), Math.min(timeoutMs, MAX_TIMER_MS));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      check();
    });
  }

  /**
   * Closes the database connection; pending waiters resolve `settled`. Afterwards every operation
   * throws `StoreUnavailableError`. The file and its `-wal`/`-shm` files stay.
   */
  async close(): Promise<void> {
    this.isClosed = true;
    for (const wake of [...this.waiters]) wake();
    const connection = this.connection;
    this.connection = undefined;
    if (connection === undefined) return;
    connection.signal.close();
    try {
      connection.db.close();
    } catch (error) {
      this.onBackgroundError(error);
    }
  }

  private now(): number {
    return Math.floor(this.clock.now());
  }

  private assertOpen(operation: string): void {
    if (this.isClosed) throw new StoreUnavailableError(operation, `the SQLiteStore (${this.path}) is closed`);
  }

  /** The connection, opened on first use; a failed open is tried again by the next call. Throws SQLite's error. */
  private connect(): Connection {
    if (this.connection !== undefined) return this.connection;
    let db: Database.Database | undefined;
    try {
      // busy_timeout 0: a locked database is waited for by withLock(), off the event loop.
      db = new Database(this.path, { timeout: 0 });
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') {
        throw new StoreConfigurationError(
          STORE,
          `${this.path} cannot be put in WAL mode (journal_mode is ${String(mode)}); use a file on a local filesystem`,
        );
      }
      db.pragma(`synchronous = ${this.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      const opened = db;
      const file = realpathSync(this.path);
      const runInTransaction = opened.transaction((work: () => unknown) => work());
      this.connection = {
        db: opened,
        file,
        local: localSettlesFor(file, this.table),
        signal: new ChangeSignal({
          walFile: this.watchWal ? `${file}-wal` : undefined,
          dataVersion: () => opened.pragma('data_version', { simple: true }) as number,
          pollIntervalMs: this.pollIntervalMs,
          onError: this.onBackgroundError,
        }),
        statements: new Map(),
        immediate: (work) => runInTransaction.immediate(work),
      };
      return this.connection;
    } catch (error) {
      try {
        db?.close();
      } catch {
        // Already broken; the open error is the one to report.
      }
      throw error;
    }
  }

  /**
   * Runs `work` (synchronous: one transaction or one read) on the connection. When the database
   * is locked (SQLITE_BUSY: another connection holds the write lock, or is recovering the WAL),
   * nothing was done: it waits off the event loop (1 ms doubling to 16 ms, jittered) and runs
   * `work` again from the start, until `busyTimeoutMs` has passed. Every other error is mapped
   * by toStoreError.
   */
  private async withLock<T>(operation: string, work: (connection: Connection) => T): Promise<T> {
    const startedMs = performance.now();
    let delayMs = 1;
    for (;;) {
      this.assertOpen(operation);
      let connection: Connection | undefined;
      try {
        connection = this.connect();
        return work(connection);
      } catch (error) {
        if (connection?.db.inTransaction) {
          try {
            connection.db.exec('ROLLBACK');
          } catch {
            // The connection is broken; the next call reports it.
          }
        }
        const remainingMs = this.busyTimeoutMs - (performance.now() - startedMs);
        if (!isBusy(error) || remainingMs <= 0) throw this.toStoreError(operation, error);
        await sleep(Math.max(1, Math.min(remainingMs, delayMs * (0.5 + Math.random()))));
        delayMs = Math.min(delayMs * 2, 16);
      }
    }
  }

  private statement(name: StatementName): Database.Statement {
    const connection = this.connection as Connection;
    let prepared = connection.statements.get(name);
    if (prepared === undefined) {
      prepared = connection.db.prepare(this.sql[name]);
      connection.statements.set(name, prepared);
    }
    return prepared;
  }

  private run(name: StatementName, values: unknown[]): Database.RunResult {
    return this.statement(name).run(...values);
  }

  /**
   * One ownership decision: BEGIN IMMEDIATE (the write lock), the clock read under the lock,
   * `decision`, COMMIT. Nothing is committed when it throws.
   */
  private decide<T>(
    operation: string,
    decision: (now: number) => { result: T; settled?: boolean },
  ): Promise<{ result: T; settled?: boolean }> {
    return this.withLock(
      operation,
      (connection) => connection.immediate(() => decision(this.now())) as { result: T; settled?: boolean },
    );
  }

  /** The row if it exists and is within retention (read inside a decision). */
  private liveRow(ref: RecordRef, now: number): RecordRow | undefined {
    const row = this.statement('selectRecord').get(ref.tenant, ref.key) as RecordRow | undefined;
    return row === undefined || row.expires_at_ms <= now ? undefined : row;
  }

  /** A read outside a decision (get): one autocommit SELECT. */
  private read(operation: string, ref: RecordRef): Promise<RecordRow | undefined> {
    return this.withLock(operation, () => this.liveRow(ref, this.now()));
  }

  private write(row: RecordRow): void {
    this.run('updateRecord', [
      row.state,
      row.fence,
      row.attempt,
      row.owner,
      row.lease_expires_at_ms,
      row.expires_at_ms,
      row.retention_ms,
      row.outcome,
      row.error_type,
      row.error_message,
      row.run_id, // [#20 listing]
      row.call_id,
      row.description,
      row.claimed_at_ms,
      row.updated_at_ms,
      row.resolution,
      row.tenant,
      row.key,
    ]);
  }

  private sweep(now: number): void {
    this.run('sweep', [now, SWEEP_PER_WRITE]);
  }

  private notify(ref: RecordRef): void {
    this.connection?.local.notify(recordId(ref));
  }

  private toStoreError(operation: string, error: unknown): Error {
    if (ToolfenceError.isInstance(error)) return error as Error;
    const code = (error as { code?: unknown } | null)?.code;
    const message = String((error as Error | null)?.message ?? error);
    if (typeof code === 'string' && code.startsWith('SQLITE_')) {
      if (/no such table/i.test(message)) {
        return new StoreConfigurationError(
          STORE,
          `the table ${this.tableName} does not exist in ${this.path}: run \`await store.ensureSchema()\``,
          { cause: error },
        );
      }
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
        return new StoreUnavailableError(
          operation,
          `${STORE} ${this.path} stayed locked by another connection for busyTimeoutMs (${this.busyTimeoutMs} ms)`,
          { cause: error },
        );
      }
      if (code === 'SQLITE_NOTADB') {
        return new StoreConfigurationError(STORE, `${this.path} is not an SQLite database (${message})`, {
          cause: error,
        });
      }
      if (code === 'SQLITE_TOOBIG')
        return new StoreInputError('outcome', `too large for SQLite (${message})`);
      if (code === 'SQLITE_ERROR' || code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_MISUSE') {
        // A statement SQLite refuses for what it is: a bug, not an outage.
        return error as Error;
      }
      return new StoreUnavailableError(operation, `${STORE} ${this.path}: ${message} (${code})`, {
        cause: error,
      });
    }
    // better-sqlite3's own errors (e.g. the connection was closed) and anything unexpected.
    return new StoreUnavailableError(operation, `${STORE} ${this.path}: ${message}`, { cause: error });
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

function checkResolution(resolution: Resolution): void {
  if (resolution === null || typeof resolution !== 'object')
    throw new StoreInputError('resolution', 'must be an object');
  if ('outcome' in resolution) checkOutcome(resolution.outcome);
  else if ((resolution as { released?: unknown }).released !== true) {
    throw new StoreInputError('resolution', 'must be { outcome } or { released: true }');
  }
  checkResolutionAudit(resolution); // [#20 listing]
}

/** Quotes an identifier: wrapped in double quotes, inner quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

function render(template: string, placeholders: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{([a-z_]+)\}\}/g, (_, name: string) => {
    const value = placeholders[name];
    if (value === undefined) throw new Error(`SQLiteStore: unknown placeholder {{${name}}}`);
    return value;
  });
}

function recordId(ref: RecordRef): string {
  // NUL is refused in names, so tenant and key never run together ambiguously.
  return `${ref.tenant}\u0000${ref.key}`;
}

function isHolder(row: RecordRow, holder: Holder): boolean {
  return row.fence === holder.fence && row.owner === holder.owner;
}

// The same texts as the other stores, so a record reads alike on every store.
function leaseExpiredError(attempt: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired before its outcome was recorded; the effect may have happened`,
  };
}

function attemptsLostError(attempt: number, maxAttempts: number): RecordedError {
  return {
    type: 'LeaseExpired',
    message: `the lease of attempt ${attempt} expired and ${maxAttempts} attempt(s) were lost`,
  };
}

function toRecord(row: RecordRow): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    attempt: row.attempt,
    owner: row.owner,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    expiresAtMs: row.expires_at_ms,
  };
  if (row.outcome !== null) record.outcome = row.outcome;
  if (row.error_type !== null) record.error = { type: row.error_type, message: row.error_message ?? '' };
  return { ...record, ...operatorFieldsOf(row) }; // [#20 listing]
}
