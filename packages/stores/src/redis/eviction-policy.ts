// The server's eviction policy, checked once before the store's first write.
// Every record has a TTL (its retention), so any policy but `noeviction` may delete a record under
// memory pressure, `volatile-*` ones included: the usual default of managed Redis services
// (ElastiCache, Azure Cache for Redis) is `volatile-lru`. An evicted record is a forgotten call:
// its retry runs the effect again. `INFO memory` is allowed where `CONFIG GET` is disabled.
import { StoreConfigurationError } from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import { isCluster, type RedisExchange } from './backend.js';

/**
 * What the store does when the server's `maxmemory-policy` is not `noeviction`, or cannot be read:
 * - `'refuse'` (default): the first write fails with `StoreConfigurationError` naming the policy
 *   and the fix; nothing is written. Checked again on the next write.
 * - `'warn'`: one `process.emitWarning` (code `TOOLFENCE_REDIS_EVICTION_POLICY`), then the store
 *   works: only for a server you know never reaches `maxmemory`.
 * - `'ignore'`: no check, no command sent.
 */
export type EvictionPolicyCheck = 'refuse' | 'warn' | 'ignore';

export const EVICTION_POLICY_CHECKS: readonly EvictionPolicyCheck[] = ['refuse', 'warn', 'ignore'];

/** The only policy under which Redis never deletes a key that has not expired. */
const SAFE_POLICY = 'noeviction';

/** `maxmemory_policy` from an `INFO memory` reply, or undefined when the reply has none. */
export function readEvictionPolicy(info: string): string | undefined {
  const match = /^maxmemory_policy:([^\r\n]*)$/m.exec(info);
  return match?.[1]?.trim() || undefined;
}

/**
 * Checks the eviction policy of every node the store writes to (every master of a Cluster) once;
 * a failed check (an outage) is not remembered, so the next write checks again. The hot path
 * pays one boolean test once the check has passed.
 */
export class EvictionPolicyGate {
  readonly #client: Redis | Cluster;
  readonly #exchange: RedisExchange;
  readonly #mode: EvictionPolicyCheck;
  #passed: boolean;
  #pending: Promise<void> | undefined;

  constructor(client: Redis | Cluster, exchange: RedisExchange, mode: EvictionPolicyCheck) {
    this.#client = client;
    this.#exchange = exchange;
    this.#mode = mode;
    this.#passed = mode === 'ignore';
  }

  /** True once writes may go ahead without waiting for a check. */
  get passed(): boolean {
    return this.#passed;
  }

  /**
   * Resolves when writes may go ahead.
   * @throws StoreConfigurationError (mode `'refuse'`) when a node's policy is not `noeviction` or
   *   cannot be read; StoreUnavailableError when a node does not answer.
   */
  check(operation: string): Promise<void> {
    if (this.#passed) return Promise.resolve();
    this.#pending ??= this.#run(operation).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #run(operation: string): Promise<void> {
    const nodes: (Redis | Cluster)[] = isCluster(this.#client)
      ? this.#client.nodes('master')
      : [this.#client];
    const problems: string[] = [];
    for (const node of nodes) {
      const where =
        nodes.length > 1 ? ` on ${(node as Redis).options.host}:${(node as Redis).options.port}` : '';
      let info: string;
      try {
        info = String(await this.#exchange.run(operation, node, () => (node as Redis).info('memory')));
      } catch (error) {
        // An outage is retried by the next write; a refused INFO (renamed or ACL) is a policy
        // nobody can read, which the mode decides.
        if (!StoreConfigurationError.isInstance(error)) throw error;
        problems.push(`INFO memory was refused${where} (${(error as Error).message})`);
        continue;
      }
      const policy = readEvictionPolicy(info);
      if (policy === undefined) problems.push(`INFO memory reports no maxmemory_policy${where}`);
      else if (policy !== SAFE_POLICY) problems.push(`maxmemory-policy is ${policy}${where}`);
    }
    if (problems.length === 0) {
      this.#passed = true;
      return;
    }
    const reason =
      `${problems.join('; ')}: Redis may evict a record before its retention ends, and a retry of ` +
      `that call would run its effect again. Set maxmemory-policy to noeviction (docs/redis.md, ` +
      `"Production requirements"), or pass evictionPolicy: 'warn' only if this server never reaches maxmemory`;
    if (this.#mode === 'refuse') throw new StoreConfigurationError(this.#exchange.site, reason);
    process.emitWarning(`${this.#exchange.site}: ${reason}`, {
      type: 'ToolfenceWarning',
      code: 'TOOLFENCE_REDIS_EVICTION_POLICY',
    });
    this.#passed = true;
  }
}
