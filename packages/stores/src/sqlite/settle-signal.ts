import { type FSWatcher, watch } from 'node:fs';

/**
 * Waiters of one store, and how they hear of a settle:
 * - in this process: {@link LocalSettles} (every SQLiteStore of this process on the same file and
 *   table shares one), woken directly by the store that committed the settle;
 * - in other processes: {@link ChangeSignal}, one per store while it has waiters. It watches the
 *   `-wal` file (inotify on Linux: a commit by another process writes it) and, on every event and
 *   on a slow safety poll, compares `PRAGMA data_version`, which changes exactly when another
 *   connection committed. Only then do waiters re-read their records.
 */
export interface SettleWaiter {
  readonly tenant: string;
  /** The record settled in this process (no re-read needed). */
  settled(): void;
  /** Something was committed by another connection: read the record again. */
  changed(): void;
}

/** Waiters of one database file and table in this process, by record id. */
export class LocalSettles {
  private readonly byRecord = new Map<string, Set<SettleWaiter>>();

  add(id: string, waiter: SettleWaiter): () => void {
    let set = this.byRecord.get(id);
    if (set === undefined) {
      set = new Set();
      this.byRecord.set(id, set);
    }
    set.add(waiter);
    return () => {
      const current = this.byRecord.get(id);
      current?.delete(waiter);
      if (current?.size === 0) this.byRecord.delete(id);
    };
  }

  notify(id: string): void {
    const set = this.byRecord.get(id);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.settled();
  }

  notifyTenant(tenant: string): void {
    for (const set of [...this.byRecord.values()]) {
      for (const waiter of [...set]) if (waiter.tenant === tenant) waiter.settled();
    }
  }
}

const registry = new Map<string, LocalSettles>();

/** The one {@link LocalSettles} of this process for a file (resolved path) and table. */
export function localSettlesFor(file: string, table: string): LocalSettles {
  const id = `${file}\u0000${table}`;
  let settles = registry.get(id);
  if (settles === undefined) {
    settles = new LocalSettles();
    registry.set(id, settles);
  }
  return settles;
}

export interface ChangeSignalOptions {
  /** The `-wal` file to watch; undefined: poll only. */
  readonly walFile: string | undefined;
  /** Reads `PRAGMA data_version` on the store's connection. */
  readonly dataVersion: () => number;
  /** Safety poll while the watch works (ms). */
  readonly pollIntervalMs: number;
  readonly onError: (error: unknown) => void;
}

/**
 * Re-checks after a file event that came before the commit was visible: the WAL frames are written
 * (the event) before the fsync and the wal-index header update that publish the commit.
 */
const followUpDelaysMs = [1, 2, 4, 8, 16, 32, 64, 128];
/** Without a working watch: poll from this period, doubling up to the safety poll. */
const fastestPollMs = 5;

/** Tells a store's waiters when another connection committed (see the module comment). */
export class ChangeSignal {
  private readonly waiters = new Set<SettleWaiter>();
  private watcher: FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private followUpTimers: NodeJS.Timeout[] = [];
  private lastVersion = 0;
  private pollMs: number;
  private pending = false;

  constructor(private readonly options: ChangeSignalOptions) {
    this.pollMs = options.pollIntervalMs;
  }

  /** Adds a waiter; the first one starts watching. Call before the waiter reads its record. */
  add(waiter: SettleWaiter): () => void {
    if (this.waiters.size === 0) this.start();
    this.waiters.add(waiter);
    return () => {
      this.waiters.delete(waiter);
      if (this.waiters.size === 0) this.stop();
    };
  }

  close(): void {
    this.waiters.clear();
    this.stop();
  }

  private start(): void {
    // Read before any waiter reads its record: a commit after this is then always seen.
    this.lastVersion = this.options.dataVersion();
    try {
      if (this.options.walFile === undefined) throw new Error('not watching');
      this.watcher = watch(this.options.walFile, { persistent: false }, () => this.onFileEvent());
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
        this.pollMs = fastestPollMs;
      });
      this.pollMs = this.options.pollIntervalMs;
    } catch {
      // No -wal file yet, or no inotify: poll with a backoff instead.
      this.watcher = undefined;
      this.pollMs = fastestPollMs;
    }
    this.schedulePoll();
  }

  private stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
    for (const timer of this.followUpTimers) clearTimeout(timer);
    this.followUpTimers = [];
  }

  private schedulePoll(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = setTimeout(() => {
      this.check();
      if (this.watcher === undefined) this.pollMs = Math.min(this.pollMs * 2, this.options.pollIntervalMs);
      if (this.waiters.size > 0) this.schedulePoll();
    }, this.pollMs);
  }

  private onFileEvent(): void {
    if (this.pending) return;
    this.pending = true;
    setImmediate(() => {
      this.pending = false;
      if (this.check()) return;
      for (const timer of this.followUpTimers) clearTimeout(timer);
      this.followUpTimers = followUpDelaysMs.map((delayMs) => setTimeout(() => this.check(), delayMs));
    });
  }

  /** True when another connection committed since the last check (waiters were told). */
  private check(): boolean {
    if (this.waiters.size === 0) return false;
    let version: number;
    try {
      version = this.options.dataVersion();
    } catch (error) {
      // The waiters' own reads report the failure; tell them to read.
      this.options.onError(error);
      version = Number.NaN;
    }
    if (version === this.lastVersion) return false;
    this.lastVersion = version;
    for (const timer of this.followUpTimers) clearTimeout(timer);
    this.followUpTimers = [];
    if (this.watcher === undefined) this.pollMs = fastestPollMs;
    for (const waiter of [...this.waiters]) waiter.changed();
    return true;
  }
}
