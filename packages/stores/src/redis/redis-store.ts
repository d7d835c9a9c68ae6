import {
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  checkClaimOptions,
  checkHolder,
  checkLeaseMs,
  checkOutcome,
  checkRecordedError,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkWaitOptions,
  type Holder,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListOptions,
  type ListPage,
  type MarkIndeterminateResult,
  type RecordedError,
  type RecordRef,
  type ReleaseResult,
  type RenewResult,
  type Resolution,
  type ResolutionEntry,
  type ResolveResult,
  StoreUnavailableError,
  type WaitOptions,
  type WaitResult,
} from '@toolfence/core';
import type { Cluster, Redis } from 'ioredis';

import {
  claimResult,
  completeResult,
  getResult,
  markIndeterminateResult,
  type RecordRead,
  releaseResult,
  renewResult,
  resolveResult,
} from './codes.js';
import { forgetRedis, listRedis, type RedisOperatorHost, resolutionsRedis } from './listing.js';
import { assertValidPrefix, type RecordNames, recordNames } from './record-names.js';
import { describeRedisAddress, toRedisStoreError } from './redis-errors.js';
import { ReplyDeadlines } from './reply-deadlines.js';
import { packageVersion, type RedisScript, scripts } from './scripts.js';
import { SettleSubscriber } from './settle-subscriber.js';

/** Options of {@link RedisStore}. */
export interface RedisStoreOptions {
  /**
   * Your ioredis client: a `Redis` (standalone or Sentinel) or a `Cluster`. The store defines its
   * Lua scripts on it (as commands named `toolfence_<version>_<script>`) and never closes it.
   * Its `keyPrefix` option must be unset: use {@link RedisStoreOptions.prefix} instead. A
   * standalone client's socket is corked until the end of each tick in which the store sends a
   * command, so that commands sent in one tick leave in one write.
   */
  readonly client: Redis | Cluster;
  /**
   * Start of every Redis key and channel the store uses. Default `'toolfence'`. Must not contain
   * `{` or `}` (the store puts a Cluster hash tag after it).
   */
  readonly prefix?: string;
  /**
   * Client-side deadline of one operation in milliseconds (rule S5): the longest wait for a Redis
   * reply before the operation fails with `StoreUnavailableError` naming the operation, the store
   * and its address. Default 5000. A command is not withdrawn when it times out: it may still run
   * later (the fence makes a late claim or result harmless). The subscriber connection the store
   * owns is discarded (and opened again on the next wait) when a SUBSCRIBE times out on it; your
   * client is yours and is not closed. `waitForSettle` answers within its `timeoutMs` plus this.
   */
  readonly operationTimeoutMs?: number;
  /** @deprecated The former name of {@link RedisStoreOptions.operationTimeoutMs} (used when that is unset). */
  readonly commandTimeoutMs?: number;
}

/** Signature of a script defined with `defineCommand`: keys first, then arguments. */
type ScriptCommand = (...keysAndArguments: (string | number)[]) => Promise<unknown>;

/** Client states in which a command would only sit in ioredis' offline queue. */
const unavailableStatuses: ReadonlySet<string> = new Set(['reconnecting', 'disconnecting', 'close', 'end']);

const DEFAULT_PREFIX = 'toolfence';
const DEFAULT_OPERATION_TIMEOUT_MS = 5000;
/** First re-check of a waited record when no message came; doubles up to the maximum. */
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2000;

function scriptCommandName(script: RedisScript): string {
  return `toolfence_${packageVersion.replace(/[^0-9A-Za-z]/g, '_')}_${script.name.replace(/-/g, '_')}`;
}

function assertTimeout(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0 || value > 2_147_483_647) {
    throw new RangeError(`${name} must be a whole number of milliseconds in 1..2147483647; got ${value}`);
  }
}

/** Errors raised by a reply deadline (so the subscriber connection they hit can be discarded). */
const deadlineErrors = new WeakSet<Error>();

function isCluster(client: Redis | Cluster): client is Cluster {
  return client.isCluster === true;
}

/**
 * An {@link IdempotencyStore} on Redis (>= 6.2) or Redis Cluster, over ioredis.
 *
 * - Every ownership decision (claim, renew, complete, release, markIndeterminate, resolve) is
 *   one Lua script; deadlines come from the Redis server's clock (`TIME`), never the worker's.
 * - A record is one Redis string (MessagePack) under `<prefix>:v2:r:{<tenant digest>}:<key>`; the
 *   hash tag keeps each script on one Cluster slot. Retention is the key's expiry (`PXAT`).
 * - A claim answers with the record in the same round trip: a first call costs two round
 *   trips (claim, complete), a repeat or a takeover one.
 * - `waitForSettle` is woken by a `PUBLISH` from the script that settles the record, through one
 *   subscriber connection per store (a `duplicate()` of the client, opened on first use), and
 *   re-reads the record as a fallback.
 * - Input is checked first (`StoreInputError`, nothing sent). A connection failure, a "not now"
 *   reply, or no reply within `operationTimeoutMs` (default 5000) throws `StoreUnavailableError`;
 *   an error reply no retry fixes (a script error, WRONGTYPE, NOPERM, READONLY) throws
 *   `StoreConfigurationError`. Every error names the store and its address, never credentials.
 *
 * With asynchronous replication a failover can lose a claim: on Redis the lease is an
 * efficiency mechanism and the fence is what makes a stale result harmless (see docs/redis.md).
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { Guard } from '@toolfence/core';
 * import { RedisStore } from '@toolfence/stores/redis';
 *
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL!) });
 * const guard = new Guard({ store });
 * ```
 */
export class RedisStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;

  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #operationTimeoutMs: number;
  /** `RedisStore at host:port/db`: every error names it (never credentials). */
  readonly #site: string;
  readonly #commands: Record<keyof typeof scripts, ScriptCommand>;
  readonly #subscriber: SettleSubscriber;
  readonly #deadlines: ReplyDeadlines;
  /** The client's socket while this store holds it corked (until the end of the tick). */
  #corked: { uncork(): void } | undefined;
  /** Pending waits, failed when the store closes. */
  readonly #waits = new Set<(error: Error) => void>();
  /** [#20 listing] What listing.ts needs of this store. */
  readonly #operatorHost: RedisOperatorHost;
  #closed = false;

  /**
   * @throws TypeError when the prefix is invalid or the client has a `keyPrefix`.
   * @throws RangeError when `operationTimeoutMs` is not a whole number of ms in 1..2^31-1.
   */
  constructor(options: RedisStoreOptions) {
    const { client } = options;
    this.#prefix = options.prefix ?? DEFAULT_PREFIX;
    assertValidPrefix(this.#prefix);
    this.#operationTimeoutMs =
      options.operationTimeoutMs ?? options.commandTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
    assertTimeout(
      options.operationTimeoutMs === undefined && options.commandTimeoutMs !== undefined
        ? 'commandTimeoutMs'
        : 'operationTimeoutMs',
      this.#operationTimeoutMs,
    );
    this.#deadlines = new ReplyDeadlines(this.#operationTimeoutMs);
    this.#site = `RedisStore at ${describeRedisAddress(client)}`;
    const keyPrefix = (client.options as { keyPrefix?: string }).keyPrefix;
    if (keyPrefix) {
      // ioredis would prefix KEYS but not the names SCAN returns or the channels: forget and
      // waitForSettle would miss. One prefix, owned by the store, keeps every name consistent.
      throw new TypeError(
        `RedisStore needs a client without ioredis' keyPrefix (got ${JSON.stringify(keyPrefix)}); pass it as RedisStore's prefix option instead`,
      );
    }
    this.#client = client;
    const commands: Partial<Record<keyof typeof scripts, ScriptCommand>> = {};
    for (const [property, script] of Object.entries(scripts) as [keyof typeof scripts, RedisScript][]) {
      const name = scriptCommandName(script);
      client.defineCommand(name, { numberOfKeys: script.numberOfKeys, lua: script.lua });
      const command = (client as unknown as Record<string, ScriptCommand>)[name];
      if (typeof command !== 'function') throw new TypeError(`ioredis did not define the command ${name}`);
      commands[property] = command.bind(client);
    }
    this.#commands = commands as Record<keyof typeof scripts, ScriptCommand>;
    this.#subscriber = new SettleSubscriber(() => (client as Redis).duplicate());
    this.#operatorHost = {
      prefix: this.#prefix,
      client,
      command: (name) => this.#commands[name],
      run: (operation, connection, exchange) => this.#run(operation, connection, exchange),
      decode: (operation, decode) => this.#decode(operation, decode),
      masters: (operation) => this.#masters(operation),
    };
  }

  /** Redis key and channel of a record (exposed for operators and tests). */
  namesOf(ref: RecordRef): RecordNames {
    return recordNames(this.#prefix, ref);
  }

  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    checkRecordRef(ref);
    checkClaimOptions(options);
    const names = this.namesOf(ref);
    const reply = await this.#run('claim', this.#client, () =>
      this.#commands.claim(
        names.key,
        options.tool,
        options.fingerprint,
        options.owner,
        options.leaseMs,
        options.retentionMs,
        options.mode === 'at-least-once' ? '1' : '0',
        options.maxAttempts,
        options.checkFingerprint ? '1' : '0',
        names.channel,
        ref.tenant, // [#20 listing] then what the record keeps for operators
        options.runId ?? '',
        options.callId ?? '',
        options.description ?? '',
      ),
    );
    return this.#decode('claim', () => claimResult(ref, reply));
  }

  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    checkLeaseMs(leaseMs);
    const names = this.namesOf(ref);
    const reply = await this.#run('renew', this.#client, () =>
      this.#commands.renew(names.key, holder.fence, holder.owner, leaseMs),
    );
    return this.#decode('renew', () => renewResult(reply));
  }

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
    const names = this.namesOf(ref);
    const reply = await this.#run('complete', this.#client, () =>
      this.#commands.complete(names.key, holder.fence, holder.owner, outcome, retentionMs, names.channel),
    );
    return this.#decode('complete', () => completeResult(ref, reply));
  }

  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    checkRecordRef(ref);
    checkHolder(holder);
    const names = this.namesOf(ref);
    const reply = await this.#run('release', this.#client, () =>
      this.#commands.release(names.key, holder.fence, holder.owner, names.channel),
    );
    return this.#decode('release', () => releaseResult(ref, reply));
  }

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
    const names = this.namesOf(ref);
    const reply = await this.#run('markIndeterminate', this.#client, () =>
      this.#commands.markIndeterminate(
        names.key,
        holder.fence,
        holder.owner,
        error.type,
        error.message,
        retentionMs,
        names.channel,
      ),
    );
    return this.#decode('markIndeterminate', () => markIndeterminateResult(ref, reply));
  }

  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    checkRecordRef(ref);
    return (await this.#read('get', ref)).record;
  }

  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    const released = 'released' in resolution && resolution.released === true;
    const outcome = released ? '' : (resolution as { outcome: string }).outcome;
    checkRetentionMs(retentionMs);
    const names = this.namesOf(ref);
    const reply = await this.#run('resolve', this.#client, () =>
      this.#commands.resolve(
        names.key,
        released ? 'released' : 'outcome',
        outcome,
        retentionMs,
        names.channel,
        resolution.by ?? '', // [#20 listing] the audit, kept in the resolution entry
        resolution.reason ?? '',
      ),
    );
    return this.#decode('resolve', () => resolveResult(ref, reply));
  }

  /**
   * [#20 listing] A page of records by state from the tenant's listing index, kept by the same
   * scripts that change state (docs/redis.md, "Listing"). Every tenant (`allTenants`) is found by
   * SCAN over the tenants' index names: an operator's request, never a tool call's.
   * @throws StoreInputError, StoreUnavailableError
   */
  async list(options: ListOptions): Promise<ListPage> {
    return listRedis(this.#operatorHost, options);
  }

  /** [#20 listing] The resolutions of a key, newest first. @throws StoreUnavailableError */
  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    return resolutionsRedis(this.#operatorHost, ref);
  }

  /**
   * Erases every record of `tenant`, with its index entries and resolution journals: the
   * tenant's expiry index names them all, erased in batches of one script each on the tenant's
   * slot. Not atomic: a record claimed while it runs may survive. Returns how many records were
   * erased.
   * @throws StoreUnavailableError
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    return forgetRedis(this.#operatorHost, options?.tenant);
  }

  /**
   * Subscribes to the record's channel (on the store's one shared subscriber connection), THEN
   * reads the record, so a settlement between the two cannot be missed. Resolves `'settled'` on
   * a message or when a read finds the record settled or gone, `'lease_expired'` when a read
   * finds the lease past (a timer is set for the deadline, judged by the Redis clock), or
   * `'timeout'`. Reads are repeated (250 ms, doubling to 2 s) in case a message was lost.
   * @throws StoreUnavailableError, or `signal.reason` when aborted.
   */
  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    this.#assertOpen('waitForSettle');
    const { signal } = options;
    signal?.throwIfAborted();
    // Fail fast on a lost client before opening (or waiting on) the subscriber.
    this.#assertConnected('waitForSettle', this.#client);
    const names = this.namesOf(ref);
    return new Promise<WaitResult>((resolve, reject) => {
      let finished = false;
      let firstReadDone = false;
      let timedOut = false;
      let pollMs = FIRST_POLL_MS;
      let checkTimer: NodeJS.Timeout | undefined;
      let timeoutTimer: NodeJS.Timeout | undefined;
      let hardStop: NodeJS.Timeout | undefined;
      const waits = this.#waits;
      const listening = this.#subscriber.listen(names.channel, () => finish(() => resolve('settled')));
      const fail = (error: Error) => finish(() => reject(error));
      const onAbort = () => finish(() => reject(signal?.reason));
      function finish(settle: () => void): void {
        if (finished) return;
        finished = true;
        clearTimeout(checkTimer);
        clearTimeout(timeoutTimer);
        clearTimeout(hardStop);
        signal?.removeEventListener('abort', onAbort);
        listening.remove();
        waits.delete(fail);
        settle();
      }
      const check = async (): Promise<void> => {
        let read: RecordRead;
        try {
          read = await this.#read('waitForSettle', ref);
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (finished) return;
        firstReadDone = true;
        const { record, nowMs } = read;
        if (record === null || record.state !== 'in_progress') return finish(() => resolve('settled'));
        const leaseRemainingMs = record.leaseExpiresAtMs - nowMs;
        if (leaseRemainingMs <= 0) return finish(() => resolve('lease_expired'));
        if (timedOut) return finish(() => resolve('timeout'));
        // +1: wake just after the deadline, not a hair before it.
        checkTimer = setTimeout(() => void check(), Math.min(leaseRemainingMs + 1, pollMs));
        pollMs = Math.min(pollMs * 2, MAX_POLL_MS);
      };

      waits.add(fail);
      signal?.addEventListener('abort', onAbort, { once: true });
      // The first read decides even when the timeout is shorter than its round trip: a record
      // that is already settled answers 'settled', as the contract asks.
      timeoutTimer = setTimeout(
        () => {
          if (firstReadDone) finish(() => resolve('timeout'));
          else timedOut = true;
        },
        Math.max(0, options.timeoutMs),
      );
      // Every exchange is bounded by operationTimeoutMs; this bounds the whole wait (rule S5), so
      // no sequence of slow exchanges can hold a waiter past timeoutMs + operationTimeoutMs.
      hardStop = setTimeout(
        () =>
          fail(
            new StoreUnavailableError(
              'waitForSettle',
              `${this.#site}: no answer within timeoutMs (${options.timeoutMs} ms) + operationTimeoutMs (${this.#operationTimeoutMs} ms)`,
            ),
          ),
        Math.max(0, options.timeoutMs) + this.#operationTimeoutMs,
      );
      // Subscribed BEFORE the first read: a settlement in between is then a message, not lost.
      const subscriberConnection = this.#subscriber.connection;
      this.#run('waitForSettle', subscriberConnection, () => listening.subscribed).then(
        () => {
          if (!finished) void check();
        },
        (error: Error) => {
          // A subscriber that did not acknowledge within the deadline is stalled: never reuse it.
          if (deadlineErrors.has(error)) this.#subscriber.discard(subscriberConnection);
          fail(error);
        },
      );
    });
  }

  /**
   * Closes the subscriber connection the store created and fails pending waits with
   * `StoreUnavailableError`. The client you passed in is left open. Later calls throw
   * `StoreUnavailableError`.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closedError = new StoreUnavailableError('waitForSettle', `${this.#site}: the store was closed`);
    for (const fail of [...this.#waits]) fail(closedError);
    await this.#subscriber.close();
  }

  async #read(operation: string, ref: RecordRef): Promise<RecordRead> {
    const names = this.namesOf(ref);
    const reply = await this.#run(operation, this.#client, () => this.#commands.get(names.key));
    return this.#decode(operation, () => getResult(ref, reply));
  }

  async #masters(operation: string): Promise<Redis[]> {
    const client = this.#client;
    if (!isCluster(client)) return [client];
    if (client.status !== 'ready') {
      // Topology is known once the cluster is ready; a PING waits for that (bounded below).
      await this.#run(operation, client, () => client.ping());
    }
    const masters = client.nodes('master');
    if (masters.length === 0) {
      throw new StoreUnavailableError(operation, `${this.#site}: the cluster client knows no master`);
    }
    return masters;
  }

  #assertOpen(operation: string): void {
    if (this.#closed) throw new StoreUnavailableError(operation, `${this.#site}: the store was closed`);
  }

  /** Runs one Redis exchange: fails fast on a lost connection, bounded by operationTimeoutMs. */
  async #run<T>(
    operation: string,
    connection: Redis | Cluster | undefined,
    exchange: () => Promise<T>,
  ): Promise<T> {
    this.#assertOpen(operation);
    let pending: Promise<T>;
    try {
      this.#assertConnected(operation, connection);
      if (connection === this.#client) this.#cork();
      pending = exchange();
    } catch (error) {
      throw toRedisStoreError(operation, error, this.#site);
    }
    try {
      return await this.#deadlines.bound(pending, () => {
        const status = connection === undefined ? 'unknown' : connection.status;
        const timedOut = new StoreUnavailableError(
          operation,
          `${this.#site}: no reply within operationTimeoutMs (${this.#operationTimeoutMs} ms; connection ${status})`,
        );
        deadlineErrors.add(timedOut);
        return timedOut;
      });
    } catch (error) {
      throw toRedisStoreError(operation, error, this.#site);
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

  #assertConnected(operation: string, connection: Redis | Cluster | undefined): void {
    if (connection !== undefined && unavailableStatuses.has(connection.status)) {
      throw new StoreUnavailableError(
        operation,
        `${this.#site}: the Redis connection is ${connection.status}`,
      );
    }
  }

  #decode<T>(operation: string, decode: () => T): T {
    try {
      return decode();
    } catch (error) {
      throw toRedisStoreError(operation, error, this.#site);
    }
  }
}
