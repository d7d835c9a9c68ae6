// The SQLiteStore's one connection to its file (opened on first use, in WAL mode), the write lock
// waited for off the event loop, and the statements every decision is made of.
import { realpathSync } from 'node:fs';
import type { RecordRef } from '@toolfence/core/store';
import { StoreConfigurationError, StoreUnavailableError } from '@toolfence/core/store';
import Database from 'better-sqlite3';
import { isBusy, type SQLiteSite, toStoreError } from './errors.js';
import { render, sqlitePlaceholders } from './names.js';
import type { SQLiteSettings } from './options.js';
import type { RecordRow } from './record-codec.js';
import { recordId } from './record-codec.js';
import { ChangeSignal, type LocalSettles, localSettlesFor } from './settle-signal.js';
import { statements } from './statements.js';

export type StatementName = keyof typeof statements;

/** A decision's answer, and whether it settled the record (its waiters are then woken). */
export interface Decided<T> {
  readonly result: T;
  readonly settled?: boolean;
}

export interface Connection {
  readonly db: Database.Database;
  readonly file: string;
  readonly local: LocalSettles;
  readonly signal: ChangeSignal;
  readonly statements: Map<StatementName, Database.Statement>;
  readonly immediate: (work: () => unknown) => unknown;
}

/**
 * How many expired rows each claim and complete deletes (an incremental sweep, as MemoryStore does),
 * and how many expired resolution entries each resolve deletes.
 */
const SWEEP_PER_WRITE = 4;
const STORE = 'SQLiteStore';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class RecordsDatabase {
  readonly placeholders: Readonly<Record<string, string>>;
  readonly site: SQLiteSite;
  readonly sql: { readonly [K in StatementName]: string };
  private connection: Connection | undefined;
  private readonly closeListeners = new Set<() => void>();
  private isClosed = false;

  constructor(private readonly settings: SQLiteSettings) {
    this.placeholders = sqlitePlaceholders(settings.table);
    this.site = {
      path: settings.path,
      tableName: this.placeholders.table as string,
      busyTimeoutMs: settings.busyTimeoutMs,
    };
    this.sql = Object.fromEntries(
      Object.entries(statements).map(([name, text]) => [name, render(text, this.placeholders)]),
    ) as { [K in StatementName]: string };
  }

  get closed(): boolean {
    return this.isClosed;
  }

  /** The store's clock, in whole milliseconds. */
  now(): number {
    return Math.floor(this.settings.clock.now());
  }

  assertOpen(operation: string): void {
    if (this.isClosed) {
      throw new StoreUnavailableError(operation, `the SQLiteStore (${this.settings.path}) is closed`, {
        outcome: 'not-applied',
      });
    }
  }

  /** Calls `listener` when the store closes; returns its removal. */
  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** Wakes the close listeners and closes the connection. The file stays. */
  close(): void {
    this.isClosed = true;
    for (const wake of [...this.closeListeners]) wake();
    const connection = this.connection;
    this.connection = undefined;
    if (connection === undefined) return;
    connection.signal.close();
    try {
      connection.db.close();
    } catch (error) {
      this.settings.onBackgroundError(error);
    }
  }

  /** The connection, opened on first use; a failed open is tried again by the next call. Throws SQLite's error. */
  connect(): Connection {
    if (this.connection !== undefined) return this.connection;
    let db: Database.Database | undefined;
    try {
      // busy_timeout 0: a locked database is waited for by withLock(), off the event loop.
      if (this.settings.readOnly) {
        db = new Database(this.settings.path, { timeout: 0, readonly: true, fileMustExist: true });
        this.checkRecordsTable(db);
      } else {
        db = new Database(this.settings.path, { timeout: 0 });
        const mode = db.pragma('journal_mode = WAL', { simple: true });
        if (mode !== 'wal') {
          throw new StoreConfigurationError(
            STORE,
            `${this.settings.path} cannot be put in WAL mode (journal_mode is ${String(mode)}); use a file on a local filesystem`,
          );
        }
        db.pragma(`synchronous = ${this.settings.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
      }
      const opened = db;
      const file = realpathSync(this.settings.path);
      const runInTransaction = opened.transaction((work: () => unknown) => work());
      this.connection = {
        db: opened,
        file,
        local: localSettlesFor(file, this.settings.table),
        signal: new ChangeSignal({
          walFile: this.settings.watchWal ? `${file}-wal` : undefined,
          dataVersion: () => opened.pragma('data_version', { simple: true }) as number,
          pollIntervalMs: this.settings.pollIntervalMs,
          onError: this.settings.onBackgroundError,
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

  /** A read-only open finds the records table, or says the file is not a toolfence database. */
  private checkRecordsTable(db: Database.Database): void {
    const found = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?")
      .get(this.settings.table);
    if (found === undefined) {
      throw new StoreConfigurationError(
        STORE,
        `${this.settings.path} is not a toolfence database: it has no table ${this.site.tableName} (the application creates it with \`await store.ensureSchema()\`)`,
      );
    }
  }

  /** @throws StoreConfigurationError when the store was opened read-only. */
  assertWritable(operation: string): void {
    if (this.settings.readOnly) {
      throw new StoreConfigurationError(
        STORE,
        `${operation} writes, and this SQLiteStore (${this.settings.path}) was opened with readOnly: true`,
      );
    }
  }

  /**
   * Runs `work` (synchronous: one transaction or one read) on the connection. When the database
   * is locked (SQLITE_BUSY: another connection holds the write lock, or is recovering the WAL),
   * nothing was done: it waits off the event loop (1 ms doubling to 16 ms, jittered) and runs
   * `work` again from the start, until `busyTimeoutMs` has passed. Every other error is mapped
   * by toStoreError.
   */
  async withLock<T>(operation: string, work: (connection: Connection) => T): Promise<T> {
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
        const remainingMs = this.settings.busyTimeoutMs - (performance.now() - startedMs);
        if (!isBusy(error) || remainingMs <= 0) throw toStoreError(operation, error, this.site);
        await sleep(Math.max(1, Math.min(remainingMs, delayMs * (0.5 + Math.random()))));
        delayMs = Math.min(delayMs * 2, 16);
      }
    }
  }

  statement(name: StatementName): Database.Statement {
    const connection = this.connection as Connection;
    let prepared = connection.statements.get(name);
    if (prepared === undefined) {
      prepared = connection.db.prepare(this.sql[name]);
      connection.statements.set(name, prepared);
    }
    return prepared;
  }

  run(name: StatementName, values: unknown[]): Database.RunResult {
    return this.statement(name).run(...values);
  }

  /**
   * One ownership decision: BEGIN IMMEDIATE (the write lock), the clock read under the lock,
   * `decision`, COMMIT. Nothing is committed when it throws.
   */
  decide<T>(operation: string, decision: (now: number) => Decided<T>): Promise<Decided<T>> {
    this.assertWritable(operation);
    return this.withLock(
      operation,
      (connection) => connection.immediate(() => decision(this.now())) as Decided<T>,
    );
  }

  /**
   * `answer` first, outside any transaction (a read that may settle the call at once: it returns
   * undefined when it cannot); otherwise {@link decide}'s transaction. Both run in one synchronous
   * step, so a call still blocks the event loop once and is retried whole on SQLITE_BUSY.
   */
  answerOrDecide<T>(
    operation: string,
    answer: (now: number) => T | undefined,
    decision: (now: number) => Decided<T>,
  ): Promise<Decided<T>> {
    return this.withLock(operation, (connection) => {
      const answered = answer(this.now());
      if (answered !== undefined) return { result: answered };
      this.assertWritable(operation);
      return connection.immediate(() => decision(this.now())) as Decided<T>;
    });
  }

  /** The row if it exists and is within retention (read inside a decision). */
  liveRow(ref: RecordRef, now: number): RecordRow | undefined {
    const row = this.statement('selectRecord').get(ref.tenant, ref.key) as RecordRow | undefined;
    return row === undefined || row.expires_at_ms <= now ? undefined : row;
  }

  /** A read outside a decision (get): one autocommit SELECT. */
  read(operation: string, ref: RecordRef): Promise<RecordRow | undefined> {
    return this.withLock(operation, () => this.liveRow(ref, this.now()));
  }

  write(row: RecordRow): void {
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
      row.run_id,
      row.call_id,
      row.description,
      row.claimed_at_ms,
      row.updated_at_ms,
      row.resolution,
      row.tenant,
      row.key,
    ]);
    // The sweep bound moves only when the retention deadline passes it (updateRecord leaves it,
    // and its index, alone).
    if (row.sweep_at_ms === null || row.expires_at_ms > row.sweep_at_ms) {
      this.run('raiseSweep', [row.expires_at_ms, row.tenant, row.key]);
    }
  }

  sweep(now: number): void {
    this.run('sweep', [now, now, SWEEP_PER_WRITE]);
  }

  /** Deletes a few expired resolution entries (each resolve, which adds one, does this). */
  sweepResolutions(now: number): void {
    this.run('sweepResolutions', [now, SWEEP_PER_WRITE]);
  }

  /** Wakes this process's waiters of `ref` (after a decision that settled it). */
  notify(ref: RecordRef): void {
    this.connection?.local.notify(recordId(ref));
  }

  /** Wakes this process's waiters of every record of `tenant`. */
  notifyTenant(tenant: string): void {
    this.connection?.local.notifyTenant(tenant);
  }
}
