// RedisStore.forget: a tenant's records erased by SCAN on every master and pipelined UNLINKs.
import { StoreUnavailableError } from '@toolfence/core';
import type { Cluster, Redis } from 'ioredis';
import { toRedisStoreError } from './redis-errors.js';
import { isCluster, type RedisExchange } from './redis-exchange.js';

/** Keys asked for per SCAN step and erased per pipeline in `forget`. */
const FORGET_BATCH = 500;

async function masters(client: Redis | Cluster, exchange: RedisExchange): Promise<Redis[]> {
  if (!isCluster(client)) return [client];
  if (client.status !== 'ready') {
    // Topology is known once the cluster is ready; a PING waits for that (bounded below).
    await exchange.run('forget', client, () => client.ping());
  }
  const nodes = client.nodes('master');
  if (nodes.length === 0) {
    throw new StoreUnavailableError('forget', `${exchange.site}: the cluster client knows no master`);
  }
  return nodes;
}

/** Erases the keys of one node that match `pattern`; how many it erased. */
async function forgetOnNode(node: Redis, pattern: string, exchange: RedisExchange): Promise<number> {
  let erased = 0;
  let cursor = '0';
  do {
    const [next, keys] = await exchange.run('forget', node, () =>
      node.scan(cursor, 'MATCH', pattern, 'COUNT', FORGET_BATCH),
    );
    cursor = next;
    if (keys.length === 0) continue;
    const pipeline = node.pipeline();
    for (const key of keys) pipeline.unlink(key);
    const results = await exchange.run('forget', node, () => pipeline.exec());
    for (const [error, count] of results ?? []) {
      if (error) throw toRedisStoreError('forget', error, exchange.site);
      erased += Number(count);
    }
  } while (cursor !== '0');
  return erased;
}

/** See RedisStore.forget. */
export async function forgetTenant(
  client: Redis | Cluster,
  exchange: RedisExchange,
  pattern: string,
): Promise<number> {
  let erased = 0;
  for (const node of await masters(client, exchange)) erased += await forgetOnNode(node, pattern, exchange);
  return erased;
}
