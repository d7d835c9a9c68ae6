// How the RedisStore talks to Redis: each exchange fails fast on a lost connection, is bounded
// by operationTimeoutMs (rule S5 in packages/core/docs/store-contract.md), has its errors
// classified (errors.ts), and corks the client's socket for the rest of the tick.
import { StoreUnavailableError } from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import { toRedisStoreError } from './errors.js';
import { ReplyDeadlines } from './operation-deadline.js';

/** Client states in which a command would only sit in ioredis' offline queue. */
const unavailableStatuses: ReadonlySet<string> = new Set(['reconnecting', 'disconnecting', 'close', 'end']);

export function isCluster(client: Redis | Cluster): client is Cluster {
  return client.isCluster === true;
}

export class RedisExchange {
  readonly #client: Redis | Cluster;
  readonly #operationTimeoutMs: number;
  readonly #deadlines: ReplyDeadlines;
  /** Errors raised by a reply deadline (so the subscriber connection they hit can be discarded). */
  readonly #deadlineErrors = new WeakSet<Error>();
  /** The client's socket while this store holds it corked (until the end of the tick). */
  #corked: { uncork(): void } | undefined;
  #closed = false;

  /** @param site `RedisStore at host:port/db`: every error names it (never credentials). */
  constructor(
    client: Redis | Cluster,
    operationTimeoutMs: number,
    readonly site: string,
  ) {
    this.#client = client;
    this.#operationTimeoutMs = operationTimeoutMs;
    this.#deadlines = new ReplyDeadlines(operationTimeoutMs);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** After this every exchange throws `StoreUnavailableError`. */
  close(): void {
    this.#closed = true;
  }

  /** True when `error` is a reply deadline this exchange raised. */
  isDeadlineError(error: Error): boolean {
    return this.#deadlineErrors.has(error);
  }

  assertOpen(operation: string): void {
    if (this.#closed)
      throw new StoreUnavailableError(operation, `${this.site}: the store was closed`, {
        outcome: 'not-applied',
      });
  }

  assertConnected(operation: string, connection: Redis | Cluster | undefined): void {
    if (connection !== undefined && unavailableStatuses.has(connection.status)) {
      throw new StoreUnavailableError(
        operation,
        `${this.site}: the Redis connection is ${connection.status}`,
        { outcome: 'not-applied' },
      );
    }
  }

  /** Runs one Redis exchange: fails fast on a lost connection, bounded by operationTimeoutMs. */
  async run<T>(
    operation: string,
    connection: Redis | Cluster | undefined,
    exchange: () => Promise<T>,
  ): Promise<T> {
    this.assertOpen(operation);
    let pending: Promise<T>;
    try {
      this.assertConnected(operation, connection);
      if (connection === this.#client) this.#cork();
      pending = exchange();
    } catch (error) {
      throw toRedisStoreError(operation, error, this.site);
    }
    try {
      return await this.#deadlines.bound(pending, () => {
        const status = connection === undefined ? 'unknown' : connection.status;
        const timedOut = new StoreUnavailableError(
          operation,
          `${this.site}: no reply within operationTimeoutMs (${this.#operationTimeoutMs} ms; connection ${status})`,
          // Sent and unanswered: the script may have run.
          { outcome: 'unknown' },
        );
        this.#deadlineErrors.add(timedOut);
        return timedOut;
      });
    } catch (error) {
      throw toRedisStoreError(operation, error, this.site);
    }
  }

  /** A script's reply as a result; a reply no script sends is classified like any error. */
  decode<T>(operation: string, decode: () => T): T {
    try {
      return decode();
    } catch (error) {
      throw toRedisStoreError(operation, error, this.site);
    }
  }

  /**
   * Corks the client's socket until the end of the current tick, so the commands this store
   * sends in one tick (32 concurrent calls answered by one read, say) leave in ONE write instead
   * of one system call each, as `@redis/client` does for every command. Nothing waits: the socket
   * is uncorked on `process.nextTick`, after the promise continuations of this tick have run.
   * Standalone clients only (a Cluster writes to one socket per node).
   */
  #cork(): void {
    if (this.#corked !== undefined) return;
    const client = this.#client;
    if (isCluster(client) || client.status !== 'ready') return;
    const stream = client.stream as Redis['stream'] | undefined;
    if (stream === undefined || !stream.writable) return;
    stream.cork();
    this.#corked = stream;
    process.nextTick(this.#uncork);
  }

  readonly #uncork = (): void => {
    const stream = this.#corked;
    this.#corked = undefined;
    stream?.uncork();
  };
}
