import type { Cluster, Redis } from 'ioredis';

interface ChannelEntry {
  readonly listeners: Set<() => void>;
  /** Resolves once Redis acknowledged the SUBSCRIBE. */
  readonly subscribed: Promise<void>;
}

/**
 * One subscriber connection shared by every waiter of a store: a map of channel → listeners.
 * A channel is subscribed while at least one waiter listens to it. Commands on one connection
 * are answered in order, so an UNSUBSCRIBE followed by a SUBSCRIBE of the same channel ends
 * subscribed.
 */
export class SettleSubscriber {
  readonly #createConnection: () => Redis | Cluster;
  readonly #channels = new Map<string, ChannelEntry>();
  #connection: Redis | Cluster | undefined;

  constructor(createConnection: () => Redis | Cluster) {
    this.#createConnection = createConnection;
  }

  /** The connection, if one was created. */
  get connection(): Redis | Cluster | undefined {
    return this.#connection;
  }

  /** Number of channels currently subscribed (for tests and diagnostics). */
  get channelCount(): number {
    return this.#channels.size;
  }

  #connect(): Redis | Cluster {
    if (this.#connection === undefined) {
      const connection = this.#createConnection();
      // Failures surface through the waiters' timeouts and reads; an 'error' event with no
      // listener would only be logged.
      connection.on('error', () => {});
      connection.on('message', (channel: string) => {
        const entry = this.#channels.get(channel);
        if (entry === undefined) return;
        for (const listener of [...entry.listeners]) listener();
      });
      this.#connection = connection;
    }
    return this.#connection;
  }

  /**
   * Adds `listener` to `channel`. `subscribed` resolves once Redis acknowledged the SUBSCRIBE
   * (rejects if it failed); `remove` takes the listener off again (and unsubscribes the channel
   * when it was the last one). Call `remove` in every case.
   */
  listen(channel: string, listener: () => void): { subscribed: Promise<void>; remove: () => void } {
    const connection = this.#connect();
    let entry = this.#channels.get(channel);
    if (entry === undefined) {
      entry = {
        listeners: new Set(),
        subscribed: connection.subscribe(channel).then(() => undefined),
      };
      // Each caller awaits `subscribed`; this only keeps a failure from being reported unhandled.
      entry.subscribed.catch(() => {});
      this.#channels.set(channel, entry);
    }
    const current = entry;
    current.listeners.add(listener);
    const remove = () => {
      if (!current.listeners.delete(listener)) return;
      if (current.listeners.size === 0 && this.#channels.get(channel) === current) {
        this.#channels.delete(channel);
        connection.unsubscribe(channel).catch(() => {});
      }
    };
    return { subscribed: current.subscribed, remove };
  }

  /**
   * Drops `connection` if it is still the current one (a SUBSCRIBE on it timed out: it is stalled
   * or cut off). Its channels are forgotten, so the next `listen` opens a fresh connection and
   * subscribes again; waiters still listening on the old one fall back to their re-reads.
   */
  discard(connection: Redis | Cluster | undefined): void {
    if (connection === undefined || connection !== this.#connection) return;
    this.#connection = undefined;
    this.#channels.clear();
    connection.disconnect();
  }

  /** Closes the connection this subscriber created (never the user's client). */
  async close(): Promise<void> {
    const connection = this.#connection;
    this.#connection = undefined;
    this.#channels.clear();
    if (connection === undefined) return;
    connection.disconnect();
  }
}
