// The store contract's types, as `contract.X` (docs/store-contract.md in @toolfence/core).
import type * as contract from '@toolfence/core/store';
import {
  checkApprovalDecision,
  checkListOptions,
  checkRecordRef,
  checkRetentionMs,
  StoreInputError,
} from '@toolfence/core/store';
import { checkInput } from '../shared/operation-input.js';
import { decideOn } from './approvals.js';
import { type Connection, type Decided, RecordsDatabase } from './backend.js';
import { answerWithoutChange, decideClaim } from './claim.js';
import { ensureSchema } from './ensure-schema.js';
import { isBusy, toStoreError } from './errors.js';
import { decideComplete, decideMarkIndeterminate, decideRelease, decideRenew } from './holder-writes.js';
import { listRecords, readResolutions } from './operator-reads.js';
import { checkResolution, decideCleanup, decideForget, decideResolve } from './operator-writes.js';
import { checkSQLiteOptions, type SQLiteEnsureSchemaResult, type SQLiteStoreOptions } from './options.js';
import { toRecord } from './record-codec.js';
import { waitForSettle } from './settle-wait.js';

export type { SQLiteEnsureSchemaResult, SQLiteStoreOptions } from './options.js';

/**
 * An {@link IdempotencyStore} in one SQLite file (better-sqlite3, an optional peer dependency):
 * durable records on ONE host, shared by every process that opens the file.
 *
 * - The file is in WAL mode. Every ownership decision (claim, renew, complete, release,
 *   markIndeterminate, resolve, forget) is one `BEGIN IMMEDIATE` transaction: it takes the
 *   database's write lock first, then reads the clock and the row, decides exactly as
 *   `MemoryStore` does, writes and commits. Decisions of all processes are serialised by that lock.
 *   A claim reads the row first, without the lock: a settled, conflicting or busy record is
 *   answered from that read (true at its instant, as on PostgreSQL); only a claim that writes
 *   takes the lock.
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
export class SQLiteStore implements contract.IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  readonly path: string;
  private readonly db: RecordsDatabase;

  /** @throws TypeError when an option cannot be used. Opens nothing: the file is opened on first use. */
  constructor(options: SQLiteStoreOptions) {
    const settings = checkSQLiteOptions(options);
    this.path = settings.path;
    this.db = new RecordsDatabase(settings);
  }

  /** The quoted name of the records table. */
  get tableName(): string {
    return this.db.site.tableName;
  }

  /**
   * Creates or upgrades the table: applies, in order, every migration not yet recorded in the
   * `<table>_migrations` table, in one `BEGIN IMMEDIATE` transaction, so any number of processes
   * may call it at once: one applies, the others wait for the lock (up to `busyTimeoutMs`) and
   * find nothing to do. Idempotent.
   * @throws StoreUnavailableError when the file cannot be opened or stays locked.
   */
  async ensureSchema(): Promise<SQLiteEnsureSchemaResult> {
    return { applied: await ensureSchema(this.db) };
  }

  /** {@inheritDoc IdempotencyStore.claim} */
  async claim(ref: contract.RecordRef, options: contract.ClaimOptions): Promise<contract.ClaimResult> {
    checkInput.claim(ref, options);
    // Read first, outside a transaction: a repeat, a conflict or a busy record is answered from
    // the latest committed row, true at the instant of the read (a settled record only changes by
    // resolve, a late complete of its holder, forget or expiry, each later; a busy answer only
    // sends the caller to waitForSettle, which re-reads). Every other claim is decided under the
    // write lock, where the row is read again.
    const { result, settled } = await this.db.answerOrDecide(
      'claim',
      (now) => answerWithoutChange(this.db.liveRow(ref, now), options, now),
      (now) => decideClaim(this.db, ref, options, now),
    );
    if (settled) this.db.notify(ref);
    return result;
  }

  /** {@inheritDoc IdempotencyStore.renew} */
  async renew(
    ref: contract.RecordRef,
    holder: contract.Holder,
    leaseMs: number,
  ): Promise<contract.RenewResult> {
    checkInput.renew(ref, holder, leaseMs);
    return this.decide(ref, 'renew', (now) => decideRenew(this.db, ref, holder, leaseMs, now));
  }

  /** {@inheritDoc IdempotencyStore.complete} */
  async complete(
    ref: contract.RecordRef,
    holder: contract.Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<contract.CompleteResult> {
    checkInput.complete(ref, holder, outcome, retentionMs);
    return this.decide(ref, 'complete', (now) =>
      decideComplete(this.db, ref, holder, outcome, retentionMs, now),
    );
  }

  /** {@inheritDoc IdempotencyStore.release} */
  async release(ref: contract.RecordRef, holder: contract.Holder): Promise<contract.ReleaseResult> {
    checkInput.release(ref, holder);
    return this.decide(ref, 'release', (now) => decideRelease(this.db, ref, holder, now));
  }

  /** {@inheritDoc IdempotencyStore.markIndeterminate} */
  async markIndeterminate(
    ref: contract.RecordRef,
    holder: contract.Holder,
    error: contract.RecordedError,
    retentionMs: number,
  ): Promise<contract.MarkIndeterminateResult> {
    checkInput.markIndeterminate(ref, holder, error, retentionMs);
    return this.decide(ref, 'markIndeterminate', (now) =>
      decideMarkIndeterminate(this.db, ref, holder, error, retentionMs, now),
    );
  }

  /** {@inheritDoc IdempotencyStore.get} */
  async get(ref: contract.RecordRef): Promise<contract.IdempotencyRecord | null> {
    checkRecordRef(ref);
    const row = await this.db.read('get', ref);
    return row === undefined ? null : toRecord(row);
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
    return this.decide(ref, 'resolve', (now) => decideResolve(this.db, ref, resolution, retentionMs, now));
  }

  /**
   * {@inheritDoc IdempotencyStore.decideApproval}
   * One `BEGIN IMMEDIATE` transaction; a claim that consumes the approval reads the row under the
   * same write lock, so two claims (of any processes) never both use it.
   */
  async decideApproval(
    ref: contract.RecordRef,
    decision: contract.ApprovalDecision,
    retentionMs: number,
  ): Promise<contract.DecideResult> {
    checkRecordRef(ref);
    checkApprovalDecision(decision);
    checkRetentionMs(retentionMs);
    // Nobody waits on a record before its claim (waitForSettle answers it settled at once).
    return this.decide(ref, 'decideApproval', (now) => decideOn(this.db, ref, decision, retentionMs, now));
  }

  /** {@inheritDoc IdempotencyStore.list} */
  async list(options: contract.ListOptions): Promise<contract.ListPage> {
    checkListOptions(options);
    return this.db.withLock('list', () => listRecords(this.db, options, this.db.now()));
  }

  /** {@inheritDoc IdempotencyStore.resolutions} */
  async resolutions(ref: contract.RecordRef): Promise<readonly contract.ResolutionEntry[]> {
    checkRecordRef(ref);
    return this.db.withLock('resolutions', () => readResolutions(this.db, ref, this.db.now()));
  }

  /**
   * {@inheritDoc IdempotencyStore.forget}
   * Rows of the tenant past retention are deleted too but not counted.
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    if (options === null || typeof options !== 'object')
      throw new StoreInputError('forget options', 'must be an object');
    checkRecordRef({ tenant: options.tenant, key: 'k' });
    const { result } = await this.db.decide('forget', (now) => decideForget(this.db, options.tenant, now));
    this.db.notifyTenant(options.tenant);
    return result;
  }

  /**
   * Deletes at most `limit` rows (default 1000) past their retention deadline, in one transaction,
   * and returns how many it deleted: expired records first, then, with what is left of `limit`,
   * expired resolution entries. Loop until it returns less than `limit` to drain a backlog.
   * Expired rows are already ignored by every operation (and claims and completes delete a few
   * each); this only reclaims space.
   * @throws StoreUnavailableError
   */
  async cleanup(options: { readonly limit?: number } = {}): Promise<number> {
    const limit = options.limit ?? 1000;
    if (!Number.isSafeInteger(limit) || limit < 1)
      throw new StoreInputError('limit', 'must be a whole number >= 1');
    return (await this.db.decide('cleanup', (now) => decideCleanup(this.db, limit, now))).result;
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
  async waitForSettle(ref: contract.RecordRef, options: contract.WaitOptions): Promise<contract.WaitResult> {
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
      this.db.assertOpen('waitForSettle');
      connection = this.db.connect();
    } catch (error) {
      if (!isBusy(error)) throw toStoreError('waitForSettle', error, this.db.site);
      connection = await this.db.withLock('waitForSettle', (opened) => opened);
    }
    if (options.signal?.aborted) throw options.signal.reason;
    return waitForSettle(this.db, connection, ref, options);
  }

  /**
   * Closes the database connection; pending waiters resolve `settled`. Afterwards every operation
   * throws `StoreUnavailableError`. The file and its `-wal`/`-shm` files stay.
   */
  async close(): Promise<void> {
    this.db.close();
  }

  /** One decision in one transaction; this process's waiters are woken when it settled the record. */
  private async decide<T>(
    ref: contract.RecordRef,
    operation: string,
    decision: (now: number) => Decided<T>,
  ): Promise<T> {
    const { result, settled } = await this.db.decide(operation, decision);
    if (settled) this.db.notify(ref);
    return result;
  }
}
