// The indexing pass for records claimed natively (native-claim.ts): such a record has no index
// entry until a script rewrites it, which its holder's complete, renew or release does. A holder
// killed after its claim leaves a record that only this pass indexes: `list` runs it before it
// pages in-progress or lease-expired records (and before a listing of every state), `forget`
// before it erases. It SCANs the record keys of the tenant (or of every tenant) on every master,
// an operator's cost that grows with the keyspace, so the claim writes nothing beyond its record
// (docs/redis.md, "Native claims"); statements/index-claims-1.lua writes the entries.
import type { Cluster, Redis } from 'ioredis';
import type { RedisExchange } from './backend.js';
import { recordKeyPattern, tagOfRecordKey } from './names.js';
import { masters } from './operator-reads.js';
import type { ScriptCommand } from './script-commands.js';

/** Keys asked for per SCAN call, and record keys per script call (one tenant's slot each). */
const SCAN_COUNT = 1000;

/** What the pass needs of its RedisStore. */
export interface NativeIndexHost {
  readonly prefix: string;
  readonly client: Redis | Cluster;
  readonly exchange: RedisExchange;
  /** The index-claims-1.lua command. */
  readonly indexClaims: ScriptCommand;
}

/**
 * Writes the index entries of every natively claimed record of `tenant` (every tenant when
 * undefined) that has none yet. Returns how many it indexed.
 * @throws StoreUnavailableError
 */
export async function indexNativeClaims(
  host: NativeIndexHost,
  operation: string,
  tenant: string | undefined,
): Promise<number> {
  const pattern = recordKeyPattern(host.prefix, tenant);
  let indexed = 0;
  for (const node of await masters(host.client, host.exchange)) {
    let cursor = '0';
    do {
      const [next, keys] = await host.exchange.run(operation, node, () =>
        node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT),
      );
      cursor = next;
      const byTenant = new Map<string, string[]>();
      for (const key of keys) {
        const tag = tagOfRecordKey(key);
        if (tag === undefined) continue;
        const group = byTenant.get(tag);
        if (group === undefined) byTenant.set(tag, [key]);
        else group.push(key);
      }
      for (const group of byTenant.values()) {
        const reply = await host.exchange.run(operation, host.client, () =>
          host.indexClaims(group[0]!, ...group),
        );
        if (Array.isArray(reply)) indexed += Number(reply[2]) || 0;
      }
    } while (cursor !== '0');
  }
  return indexed;
}
