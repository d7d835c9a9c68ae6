/**
 * One LISTEN connection per store, shared by every waiter of that store. Internal.
 *
 * The connection is opened lazily by the first waiter, LISTENs on the store's channel and
 * dispatches each notification (payload = digest of tenant and key) to the waiters of that
 * record. When it fails or ends, waiters fall back to polling and it is reopened with backoff;
 * once it listens again every waiter re-reads its record, because notifications sent while it
 * was down are lost.
 */

/** A dedicated connection that can LISTEN: pg's `Client` or `PoolClient`. */
export interface PostgresListenConnection {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  /** PoolClient: called with `true` so the pool destroys the connection instead of reusing it. */
  release?(destroy?: boolean | Error): void;
  /** Client: closed with `end()` when it has no `release`. */
  end?(): Promise<void>;
}

/** What the listener tells one waiter. */
export interface SettleWaiter {
  /** A notification arrived for the waiter's record: it left in_progress or was deleted. */
  notified(): void;
  /** LISTEN became active: re-read if already read once, a notification may have been missed. */
  restored(): void;
  /** LISTEN was lost: poll until it is restored. */
  lost(): void;
  /** The store is closing. */
  closed(): void;
}

const firstReconnectDelayMs = 100;
const maxReconnectDelayMs = 5_000;

export class SettleListener {
  private readonly waiters = new Map<string, Set<SettleWaiter>>();
  private connection: PostgresListenConnection | undefined;
  private connecting: Promise<boolean> | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectDelayMs = firstReconnectDelayMs;
  private isClosed = false;
  /** Connections opened so far (for diagnostics and tests). */
  connectionsOpened = 0;

  constructor(
    private readonly openConnection: (() => Promise<PostgresListenConnection>) | undefined,
    private readonly channel: string,
    private readonly onError: (error: unknown) => void,
    /** Longest wait for the connection to open and LISTEN (the store's operationTimeoutMs). */
    private readonly connectTimeoutMs: number,
  ) {}

  /** True while LISTEN is active, so waiters only need a slow safety poll. */
  get listening(): boolean {
    return this.connection !== undefined;
  }

  /** Registers a waiter for the record with this digest; returns its removal. */
  add(digest: string, waiter: SettleWaiter): () => void {
    let set = this.waiters.get(digest);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(digest, set);
    }
    set.add(waiter);
    return () => {
      const current = this.waiters.get(digest);
      current?.delete(waiter);
      if (current?.size === 0) this.waiters.delete(digest);
    };
  }

  /**
   * Resolves true once LISTEN is active on the shared connection (opening it if needed), false
   * when it cannot be (no way to get a dedicated connection, or opening failed: then a reconnect
   * is scheduled and waiters poll). Never rejects.
   */
  ensureListening(): Promise<boolean> {
    if (this.isClosed || this.openConnection === undefined) return Promise.resolve(false);
    if (this.connection !== undefined) return Promise.resolve(true);
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Wakes every waiter with `closed` and releases the connection. */
  async close(): Promise<void> {
    this.isClosed = true;
    clearTimeout(this.reconnectTimer);
    for (const waiter of this.allWaiters()) waiter.closed();
    this.waiters.clear();
    await this.connecting;
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined) await dispose(connection);
  }

  private async connect(): Promise<boolean> {
    let connection: PostgresListenConnection | undefined;
    let timer: NodeJS.Timeout | undefined;
    let expired = false;
    // A frozen server never answers the connect or the LISTEN: give up after the deadline, destroy
    // what was opened (also when it opens later), and retry with backoff; waiters poll meanwhile.
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        expired = true;
        reject(new Error(`LISTEN connection not ready within ${this.connectTimeoutMs} ms`));
      }, this.connectTimeoutMs);
    });
    deadline.catch(() => undefined);
    try {
      const opening = this.openConnection!();
      opening.then(
        (late) => {
          if (expired) void dispose(late);
        },
        () => undefined,
      );
      connection = await Promise.race([opening, deadline]);
      this.connectionsOpened += 1;
      const opened = connection;
      opened.on('error', (error) => this.lose(opened, error));
      opened.on('end', () => this.lose(opened, undefined));
      opened.on('notification', (message) => {
        if (message.channel === this.channel && message.payload !== undefined) this.dispatch(message.payload);
      });
      // The channel is `toolfence_` + hex digits: a valid bare identifier, quoted anyway.
      await Promise.race([opened.query(`LISTEN "${this.channel}"`), deadline]);
      clearTimeout(timer);
      if (this.isClosed) {
        await dispose(opened);
        return false;
      }
      this.connection = opened;
      this.reconnectDelayMs = firstReconnectDelayMs;
      // Waiters that already read their record (while LISTEN was down or still opening) may have
      // missed a notification: they re-read. Waiters still waiting for this LISTEN read after it.
      for (const waiter of this.allWaiters()) waiter.restored();
      return true;
    } catch (error) {
      clearTimeout(timer);
      if (connection !== undefined) await dispose(connection, error);
      this.onError(error);
      this.scheduleReconnect();
      return false;
    }
  }

  private lose(connection: PostgresListenConnection, error: Error | undefined): void {
    if (this.connection !== connection) return;
    this.connection = undefined;
    void dispose(connection);
    if (error !== undefined) this.onError(error);
    if (this.isClosed) return;
    for (const waiter of this.allWaiters()) waiter.lost();
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.isClosed || this.reconnectTimer !== undefined || this.waiters.size === 0) return;
    const delayMs = this.reconnectDelayMs;
    this.reconnectDelayMs = Math.min(this.reconnectDelayMs * 2, maxReconnectDelayMs);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.ensureListening();
    }, delayMs);
    this.reconnectTimer.unref();
  }

  private dispatch(digest: string): void {
    const set = this.waiters.get(digest);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.notified();
  }

  private allWaiters(): SettleWaiter[] {
    return [...this.waiters.values()].flatMap((set) => [...set]);
  }
}

const disposed = new WeakSet<PostgresListenConnection>();

/** Closes a listen connection once. A pooled one is destroyed, never returned LISTENing. */
async function dispose(connection: PostgresListenConnection, reason?: unknown): Promise<void> {
  if (disposed.has(connection)) return;
  disposed.add(connection);
  // Late socket errors must not become unhandled 'error' events.
  connection.on('error', () => undefined);
  try {
    if (typeof connection.release === 'function') {
      connection.release(reason instanceof Error ? reason : true);
    } else {
      // end() waits for the server, which may be frozen: do not wait for it.
      void connection.end?.().catch(() => undefined);
    }
  } catch {
    // Already closed: nothing left to release.
  }
}
