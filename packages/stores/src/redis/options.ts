// The RedisStore's options (public: re-exported by index.ts) and their checks.
import type { Cluster, Redis } from 'ioredis';
import { EVICTION_POLICY_CHECKS, type EvictionPolicyCheck } from './eviction-policy.js';
import { assertValidPrefix } from './names.js';

export type { EvictionPolicyCheck } from './eviction-policy.js';

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
  /**
   * What the store does when the server's `maxmemory-policy` is not `noeviction` (checked once,
   * with `INFO memory` on every master, before the store's first write): `'refuse'` (default)
   * fails that write with `StoreConfigurationError` and writes nothing; `'warn'` emits one
   * `process.emitWarning` (code `TOOLFENCE_REDIS_EVICTION_POLICY`) and goes on; `'ignore'` sends
   * no check. Every record has a TTL, so `volatile-*` policies (the default of several managed
   * services) evict records too, and a retry of an evicted call runs its effect again
   * (docs/redis.md, "Production requirements"). Reads (`get`, `list`) are never refused.
   */
  readonly evictionPolicy?: EvictionPolicyCheck;
  /**
   * How the store claims. `'auto'` (default): natively on Redis >= 7.0 (`SET ... NX PX ... GET`,
   * no script: a first call's claim and every repeat; a record found in progress still goes to the
   * claim script, which judges its lease by the Redis clock), by the claim script on Redis 6.2;
   * the server's version is read once (`INFO server`) before the first claim. `'script'`: always
   * the claim script (a proxy or a Redis-compatible server that reports 7.0 but lacks `SET ... NX
   * GET` or `PEXPIRETIME`). Records written either way are read by both (docs/redis.md, "Native
   * claims").
   */
  readonly claim?: RedisClaimPath;
  /** @deprecated The former name of {@link RedisStoreOptions.operationTimeoutMs} (used when that is unset). */
  readonly commandTimeoutMs?: number;
}

/** How a {@link RedisStore} claims: see {@link RedisStoreOptions.claim}. */
export type RedisClaimPath = 'auto' | 'script';

const DEFAULT_PREFIX = 'toolfence';
const DEFAULT_OPERATION_TIMEOUT_MS = 5000;

/** The options, checked, with their defaults. */
export interface RedisSettings {
  readonly prefix: string;
  readonly operationTimeoutMs: number;
  readonly evictionPolicy: EvictionPolicyCheck;
  readonly claim: RedisClaimPath;
}

function assertTimeout(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value <= 0 || value > 2_147_483_647) {
    throw new RangeError(`${name} must be a whole number of milliseconds in 1..2147483647; got ${value}`);
  }
}

/**
 * @throws TypeError when the prefix is invalid or the client has a `keyPrefix`.
 * @throws RangeError when `operationTimeoutMs` is not a whole number of ms in 1..2^31-1, or
 *   `evictionPolicy` is not one of `'refuse'`, `'warn'`, `'ignore'`, or `claim` is not `'auto'`
 *   or `'script'`.
 */
export function checkRedisOptions(options: RedisStoreOptions): RedisSettings {
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  assertValidPrefix(prefix);
  const operationTimeoutMs =
    options.operationTimeoutMs ?? options.commandTimeoutMs ?? DEFAULT_OPERATION_TIMEOUT_MS;
  assertTimeout(
    options.operationTimeoutMs === undefined && options.commandTimeoutMs !== undefined
      ? 'commandTimeoutMs'
      : 'operationTimeoutMs',
    operationTimeoutMs,
  );
  const evictionPolicy = options.evictionPolicy ?? 'refuse';
  if (!EVICTION_POLICY_CHECKS.includes(evictionPolicy)) {
    throw new RangeError(
      `evictionPolicy must be one of ${EVICTION_POLICY_CHECKS.map((c) => `'${c}'`).join(', ')}; got ${JSON.stringify(evictionPolicy)}`,
    );
  }
  const claim = options.claim ?? 'auto';
  if (claim !== 'auto' && claim !== 'script') {
    throw new RangeError(`claim must be 'auto' or 'script'; got ${JSON.stringify(claim)}`);
  }
  return { prefix, operationTimeoutMs, evictionPolicy, claim };
}

/** @throws TypeError when the client has ioredis' `keyPrefix`. */
export function assertNoKeyPrefix(client: Redis | Cluster): void {
  const keyPrefix = (client.options as { keyPrefix?: string }).keyPrefix;
  if (keyPrefix) {
    // ioredis would prefix KEYS but not the names SCAN returns or the channels: forget and
    // waitForSettle would miss. One prefix, owned by the store, keeps every name consistent.
    throw new TypeError(
      `RedisStore needs a client without ioredis' keyPrefix (got ${JSON.stringify(keyPrefix)}); pass it as RedisStore's prefix option instead`,
    );
  }
}
