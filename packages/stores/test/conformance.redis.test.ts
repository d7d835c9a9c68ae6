// RedisStore passes the store conformance suite against a real Redis (REDIS_URL).
import { describeStoreConformance } from '@toolfence/core/testing';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, expect } from 'vitest';
import {
  connectRedis,
  deletePrefix,
  freePort,
  keysUnder,
  randomPrefix,
  redisUrl,
} from '../../../test/support/redis.js';
import { type StallingProxy, startStallingProxy } from '../../../test/support/stalling-proxy.js';

const prefix = randomPrefix('conformance');
const clients: Redis[] = [];
const proxies: StallingProxy[] = [];

afterAll(async () => {
  for (const client of clients) client.disconnect();
  await Promise.all(proxies.map((proxy) => proxy.close()));
});

// Both claim paths: native on Redis >= 7.0 (SET ... NX PX ... GET, the default here), and the
// claim script, what Redis 6.2 runs (forced with `claim: 'script'`: no 6.2 server is at hand).
for (const claim of ['auto', 'script'] as const) {
  describeStoreConformance(
    `RedisStore (claim: '${claim}')`,
    async () => {
      const client = await connectRedis();
      clients.push(client);
      return new RedisStore({ client, prefix, claim });
    },
    {
      // Racers on connections of their own: every race really reaches Redis from several clients.
      createPeerStore: async () => {
        const client = await connectRedis();
        clients.push(client);
        return new RedisStore({ client, prefix, claim });
      },
      createUnavailableStore: async () => {
        // Nothing listens on this port: the client keeps reconnecting and never becomes ready.
        const client = new Redis({ host: '127.0.0.1', port: await freePort() });
        client.on('error', () => {});
        clients.push(client);
        return new RedisStore({ client, prefix, claim, operationTimeoutMs: 500 });
      },
      // The shared server through a proxy that stops forwarding once the store is connected: only
      // this store's traffic stalls, the server itself is never frozen.
      createFrozenStore: async () => {
        const url = new URL(redisUrl);
        const proxy = await startStallingProxy(Number(url.port || 6379), url.hostname);
        proxies.push(proxy);
        const client = new Redis({ host: '127.0.0.1', port: proxy.port });
        client.on('error', () => {});
        clients.push(client);
        await client.ping();
        const store = new RedisStore({ client, prefix, claim, operationTimeoutMs: 500 });
        await store.get({ tenant: 'frozen', key: 'warm-up' });
        proxy.freeze();
        return store;
      },
      frozenOperationTimeoutMs: 500,
      cleanup: async () => {
        const client = clients[0]!;
        await deletePrefix(client, prefix);
        expect(await keysUnder(client, prefix)).toEqual([]);
      },
    },
  );
}
