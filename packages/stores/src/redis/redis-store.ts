import {
  type ApprovalDecision,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  checkListOptions,
  checkRecordRef,
  checkResolution,
  checkRetentionMs,
  checkTenant,
  checkWaitOptions,
  type DecideResult,
  type Holder,
  type IdempotencyRecord,
  type IdempotencyStore,
  type ListOptions,
  type ListPage,
  listedStates,
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
} from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import { checkInput } from '../shared/operation-input.js';
import { RedisExchange } from './backend.js';
import { describeRedisAddress } from './errors.js';
import { EvictionPolicyGate } from './eviction-policy.js';
import { type RecordNames, recordNames, tenantNames } from './names.js';
import { claimNatively, NOT_NATIVE } from './native-claim.js';
import { indexNativeClaims, type NativeIndexHost } from './native-index.js';
import { listRedis, type RedisListHost, readResolutions } from './operator-reads.js';
import { decideOnRedis, forgetTenant } from './operator-writes.js';
import { assertNoKeyPrefix, checkRedisOptions, type RedisStoreOptions } from './options.js';
import {
  claimResult,
  completeResult,
  getResult,
  markIndeterminateResult,
  type RecordRead,
  releaseResult,
  renewResult,
  resolveResult,
} from './record-codec.js';
import { defineScriptCommands, type ScriptCommand, type ScriptCommands } from './script-commands.js';
import { SettleSubscriber } from './settle-signal.js';
import { waitForSettle } from './settle-wait.js';
import { SWEEP_BUDGET, SWEEP_EVERY } from './sweep-draw.js';

export type { EvictionPolicyCheck, RedisClaimPath, RedisStoreOptions } from './options.js';

/**
 * An {@link IdempotencyStore} on Redis (>= 6.2) or Redis Cluster, over ioredis.
 *
 * - Every ownership decision (claim, renew, complete, release, markIndeterminate, resolve,
 *   decideApproval) is one Lua script; deadlines come from the Redis server's clock (`TIME`), never the worker's.
 * - A record is one Redis string (MessagePack) under `<prefix>:v2:r:{<tenant digest>}:<key>`; the
 *   hash tag (one per tenant) keeps each script, with the tenant's listing indexes, on one Cluster
 *   slot. Retention is the key's expiry (`PXAT`).
 * - A claim answers with the record in the same round trip: a first call costs two round
 *   trips (claim, complete), a repeat or a takeover one.
 * - `waitForSettle` is woken by a `PUBLISH` from the script that settles the record (sent only
 *   when a waiter marked the record), through one subscriber connection per store (a
 *   `duplicate()` of the client, opened on first use), and re-reads the record as a fallback.
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
 * import { Guard } from '@toolfence/core/store';
 * import { RedisStore } from '@toolfence/stores/redis';
 *
 * const store = new RedisStore({ client: new Redis(process.env.REDIS_URL!) });
 * const guard = new Guard({ store });
 * ```
 */
export class RedisStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  /**
   * The deadline of one operation in ms (rule S5); the guard bounds its steps by it
   * (`storeStepTimeoutMs`). A plain property, so that a Proxy or wrapper of the store reads it.
   */
  readonly operationTimeoutMs: number;

  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #operationTimeoutMs: number;
  readonly #exchange: RedisExchange;
  readonly #commands: ScriptCommands;
  readonly #subscriber: SettleSubscriber;
  /** The eviction-policy check every write waits for until it has passed once. */
  readonly #eviction: EvictionPolicyGate;
  /** Pending waits, failed when the store closes. */
  readonly #waits = new Set<(error: Error) => void>();
  /**
   * Whether claims are native: false with `claim: 'script'`, or once the server refused the
   * native commands (Redis 6.2); undefined until the first native claim is answered.
   */
  #native: boolean | undefined;

  /**
   * @throws TypeError when the prefix is invalid or the client has a `keyPrefix`.
   * @throws RangeError when `operationTimeoutMs` is not a whole number of ms in 1..2^31-1, or
   *   `evictionPolicy` is not `'refuse'`, `'warn'` or `'ignore'`.
   */
  constructor(options: RedisStoreOptions) {
    const { client } = options;
    const settings = checkRedisOptions(options);
    this.#prefix = settings.prefix;
    this.#operationTimeoutMs = settings.operationTimeoutMs;
    this.operationTimeoutMs = settings.operationTimeoutMs;
    this.#exchange = new RedisExchange(
      client,
      settings.operationTimeoutMs,
      `RedisStore at ${describeRedisAddress(client)}`,
    );
    assertNoKeyPrefix(client);
    this.#client = client;
    this.#commands = defineScriptCommands(client);
    this.#subscriber = new SettleSubscriber(() => (client as Redis).duplicate());
    this.#eviction = new EvictionPolicyGate(client, this.#exchange, settings.evictionPolicy);
    this.#native = settings.claim === 'script' ? false : undefined;
  }

  /** What the native claims' indexing pass needs of this store. */
  get #indexHost(): NativeIndexHost {
    return {
      prefix: this.#prefix,
      client: this.#client,
      exchange: this.#exchange,
      indexClaims: this.#commands.indexClaims,
    };
  }

  /** What `list` needs of this store. */
  get #listHost(): RedisListHost {
    return {
      prefix: this.#prefix,
      client: this.#client,
      exchange: this.#exchange,
      list: this.#commands.list,
    };
  }

  /** Redis key, channel and resolution journal of a record (exposed for operators and tests). */
  namesOf(ref: RecordRef): RecordNames {
    return recordNames(this.#prefix, ref);
  }

  async claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    checkInput.claim(ref, options);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('claim');
    // A claim that needs an approval is the script's: it writes awaiting_approval when nothing is there.
    if (this.#native !== false && options.approval !== 'required') {
      const answered = await claimNatively(this.#exchange, this.#client, names.key, ref, options);
      this.#native = answered !== NOT_NATIVE;
      // A record in progress: only the claim script judges its lease (by the Redis clock).
      if (answered !== undefined && answered !== NOT_NATIVE) return answered;
    }
    const native = this.#native;
    const reply = await this.#exchange.run('claim', this.#client, () =>
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
        ref.tenant, // then what the record keeps for operators
        options.runId ?? '',
        options.callId ?? '',
        options.description ?? '',
        // Natively, new records are made without the script: the complete sweeps instead.
        !native && Math.random() * SWEEP_EVERY < 1 ? SWEEP_BUDGET : 0,
        options.codec ?? '', // the guard's codec, kept with a new record
        options.approval === 'required' ? '1' : '0',
      ),
    );
    return this.#exchange.decode('claim', () => claimResult(ref, reply, options));
  }

  async renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    checkInput.renew(ref, holder, leaseMs);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('renew');
    const reply = await this.#exchange.run('renew', this.#client, () =>
      this.#commands.renew(names.key, holder.fence, holder.owner, leaseMs),
    );
    return this.#exchange.decode('renew', () => renewResult(reply));
  }

  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    checkInput.complete(ref, holder, outcome, retentionMs);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('complete');
    const reply = await this.#exchange.run('complete', this.#client, () =>
      this.#commands.complete(
        names.key,
        holder.fence,
        holder.owner,
        outcome,
        retentionMs,
        names.channel,
        // The sweep of the claims that ran no script (native claims), drawn as the claim's.
        this.#native === true && Math.random() * SWEEP_EVERY < 1 ? SWEEP_BUDGET : 0,
      ),
    );
    return this.#exchange.decode('complete', () => completeResult(ref, reply));
  }

  async release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    checkInput.release(ref, holder);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('release');
    const reply = await this.#exchange.run('release', this.#client, () =>
      this.#commands.release(names.key, holder.fence, holder.owner, names.channel),
    );
    return this.#exchange.decode('release', () => releaseResult(ref, reply));
  }

  async markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    checkInput.markIndeterminate(ref, holder, error, retentionMs);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('markIndeterminate');
    const reply = await this.#exchange.run('markIndeterminate', this.#client, () =>
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
    return this.#exchange.decode('markIndeterminate', () => markIndeterminateResult(ref, reply));
  }

  async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    checkRecordRef(ref);
    return (await this.#read('get', ref, this.#commands.get)).record;
  }

  async resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    checkRecordRef(ref);
    checkResolution(resolution);
    const released = 'released' in resolution && resolution.released === true;
    const outcome = released ? '' : (resolution as { outcome: string }).outcome;
    checkRetentionMs(retentionMs);
    const names = this.namesOf(ref);
    if (!this.#eviction.passed) await this.#eviction.check('resolve');
    const reply = await this.#exchange.run('resolve', this.#client, () =>
      this.#commands.resolve(
        names.key,
        released ? 'released' : 'outcome',
        outcome,
        retentionMs,
        names.channel,
        resolution.by ?? '', // the audit, kept in the resolution entry
        resolution.reason ?? '',
        resolution.expect?.fence ?? '', // the holder the operator saw ('' when not given)
        resolution.expect?.owner ?? '',
        resolution.force === true ? '1' : '', // settle even a live holder (issue #27)
      ),
    );
    return this.#exchange.decode('resolve', () => resolveResult(ref, reply));
  }

  /** An operator's decision on one call: statements/decide-1.lua. @throws StoreInputError, StoreUnavailableError */
  async decideApproval(
    ref: RecordRef,
    decision: ApprovalDecision,
    retentionMs: number,
  ): Promise<DecideResult> {
    checkInput.decideApproval(ref, decision, retentionMs);
    const script = [this.#client, this.#exchange, this.#commands.decide] as const;
    return decideOnRedis(...script, this.namesOf(ref).key, ref, decision, retentionMs);
  }

  /**
   * A page of records by state from the tenant's listing index, kept by the same scripts that
   * change state (docs/redis.md, "Listing"). Every tenant (`allTenants`) is found by SCAN over the
   * tenants' index names: an operator's request, never a tool call's.
   * @throws StoreInputError, StoreUnavailableError
   */
  async list(options: ListOptions): Promise<ListPage> {
    checkListOptions(options);
    const states = listedStates(options);
    // Natively claimed records have no index entries until a script rewrites them: indexed first
    // (a SCAN of the record keys) when in-progress records are asked for.
    if (states.has('in_progress') || states.has('lease_expired')) {
      await indexNativeClaims(
        this.#indexHost,
        'list',
        options.allTenants === true ? undefined : options.tenant,
      );
    }
    return listRedis(this.#listHost, options);
  }

  /** The resolutions of a key, newest first. @throws StoreUnavailableError */
  async resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    checkRecordRef(ref);
    const journal = this.namesOf(ref).journal;
    return readResolutions(this.#client, this.#exchange, this.#commands.resolutions, ref, journal);
  }

  /**
   * Erases every record of `tenant`, with its index entries and resolution journals: the
   * tenant's expiry index names them all, erased in batches of one script each on the tenant's
   * slot. Not atomic: a record claimed while it runs may survive. Returns how many records were
   * erased.
   * @throws StoreUnavailableError
   */
  async forget(options: { readonly tenant: string }): Promise<number> {
    checkTenant(options?.tenant);
    const names = tenantNames(this.#prefix, options.tenant);
    await indexNativeClaims(this.#indexHost, 'forget', options.tenant);
    return forgetTenant(this.#client, this.#exchange, this.#commands.forget, names);
  }

  /**
   * Subscribes to the record's channel (on the store's one shared subscriber connection), THEN
   * reads the record and marks it as waited on, in one script, so a settlement between the two
   * cannot be missed (a settling script publishes only for a record so marked). Resolves `'settled'` on
   * a message or when a read finds the record settled or gone, `'lease_expired'` when a read
   * finds the lease past (a timer is set for the deadline, judged by the Redis clock), or
   * `'timeout'`. Reads are repeated (250 ms, doubling to 2 s) in case a message was lost.
   * @throws StoreUnavailableError, or `signal.reason` when aborted.
   */
  async waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    checkRecordRef(ref);
    checkWaitOptions(options);
    this.#exchange.assertOpen('waitForSettle');
    options.signal?.throwIfAborted();
    // Fail fast on a lost client before opening (or waiting on) the subscriber.
    this.#exchange.assertConnected('waitForSettle', this.#client);
    const context = {
      exchange: this.#exchange,
      subscriber: this.#subscriber,
      operationTimeoutMs: this.#operationTimeoutMs,
      waits: this.#waits,
      // Marks an in-progress record as waited on (watch-1.lua): its settling script publishes.
      read: () => this.#read('waitForSettle', ref, this.#commands.watch),
    };
    return waitForSettle(context, this.namesOf(ref).channel, options);
  }

  /**
   * Closes the subscriber connection the store created and fails pending waits with
   * `StoreUnavailableError`. The client you passed in is left open. Later calls throw
   * `StoreUnavailableError`.
   */
  async close(): Promise<void> {
    if (this.#exchange.closed) return;
    this.#exchange.close();
    const closedError = new StoreUnavailableError(
      'waitForSettle',
      `${this.#exchange.site}: the store was closed`,
    );
    for (const fail of [...this.#waits]) fail(closedError);
    await this.#subscriber.close();
  }

  /** Reads the record through get-1.lua (its nowMs is 0: no clock) or watch-1.lua (the Redis clock). */
  async #read(operation: string, ref: RecordRef, command: ScriptCommand): Promise<RecordRead> {
    const names = this.namesOf(ref);
    const reply = await this.#exchange.run(operation, this.#client, () => command(names.key));
    return this.#exchange.decode(operation, () => getResult(ref, reply));
  }
}
