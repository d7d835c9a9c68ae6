// The SQLiteStore's options (public: re-exported by index.ts) and their checks.
import type { Clock } from '@toolfence/core';
import { MAX_TIMER_MS } from '@toolfence/core/store';

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
  /**
   * Open the file read-only (default `false`): for tools that only look (the `toolfence` CLI's
   * `list`, `inspect`, `stats`). The file must exist and hold the records table; nothing is written
   * to it, not even the WAL mode or `synchronous` pragma, so a file that is not a toolfence database
   * stays byte-identical. `get`, `list`, `resolutions` and `waitForSettle` work; every write and
   * `ensureSchema` throw `StoreConfigurationError`, and a missing table or a file that is no
   * SQLite database is a `StoreConfigurationError` at the first operation.
   */
  readonly readOnly?: boolean;
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

/** The options, checked, with their defaults. */
export interface SQLiteSettings {
  readonly path: string;
  readonly table: string;
  readonly busyTimeoutMs: number;
  readonly synchronous: 'full' | 'normal';
  readonly pollIntervalMs: number;
  readonly watchWal: boolean;
  readonly readOnly: boolean;
  readonly clock: Clock;
  readonly onBackgroundError: (error: unknown) => void;
}

function checkPath(path: unknown): string {
  if (typeof path !== 'string' || path === '' || path.includes('\u0000')) {
    throw new TypeError('SQLiteStore: `path` must be a non-empty file path without NUL');
  }
  if (path === ':memory:' || path.startsWith('file::memory:')) {
    throw new TypeError(
      'SQLiteStore: an in-memory database is private to one connection; use MemoryStore for that',
    );
  }
  return path;
}

/** @throws TypeError when an option cannot be used. */
export function checkSQLiteOptions(options: SQLiteStoreOptions): SQLiteSettings {
  const path = checkPath(options?.path);
  const table = options.table ?? 'toolfence_records';
  if (typeof table !== 'string' || table === '' || table.includes('\u0000')) {
    throw new TypeError('SQLiteStore: `table` must be a non-empty name without NUL');
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > MAX_TIMER_MS) {
    throw new TypeError('SQLiteStore: `busyTimeoutMs` must be a whole number of milliseconds >= 0');
  }
  const synchronous = options.synchronous ?? 'full';
  if (synchronous !== 'full' && synchronous !== 'normal') {
    throw new TypeError("SQLiteStore: `synchronous` must be 'full' or 'normal'");
  }
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  if (!Number.isSafeInteger(pollIntervalMs) || pollIntervalMs < 1) {
    throw new TypeError('SQLiteStore: `pollIntervalMs` must be a whole number of milliseconds >= 1');
  }
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') {
    throw new TypeError('SQLiteStore: `readOnly` must be a boolean');
  }
  return {
    path,
    table,
    busyTimeoutMs,
    synchronous,
    pollIntervalMs,
    watchWal: options.watchWal ?? true,
    readOnly: options.readOnly === true,
    clock: options.clock ?? Date,
    onBackgroundError: options.onBackgroundError ?? (() => undefined),
  };
}
