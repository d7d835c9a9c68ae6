// RedisStore passes the store conformance suite against a real Redis (REDIS_URL).
import { describeStoreConformance } from '@toolfence/core/testing';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis';
import { afterAll, expect } from 'vitest';
import { connectRedis, deletePrefix, freePort, keysUnder, randomPrefix } from '../support/redis.js';

const prefix = randomPrefix('conformance');
const clients: Redis[] = [];

afterAll(() => {
  for (const client of clients) client.disconnect();
});

describeStoreConformance(
  'RedisStore',
  async () => {
    const client = await connectRedis();
    clients.push(client);
    return new RedisStore({ client, prefix });
  },
  {
    // Racers on connections of their own: every race really reaches Redis from several clients.
    createPeerStore: async () => {
      const client = await connectRedis();
      clients.push(client);
      return new RedisStore({ client, prefix });
    },
    createUnavailableStore: async () => {
      // Nothing listens on this port: the client keeps reconnecting and never becomes ready.
      const client = new Redis({ host: '127.0.0.1', port: await freePort() });
      client.on('error', () => {});
      clients.push(client);
      return new RedisStore({ client, prefix, operationTimeoutMs: 500 });
    },
    cleanup: async () => {
      const client = clients[0]!;
      await deletePrefix(client, prefix);
      expect(await keysUnder(client, prefix)).toEqual([]);
    },
  },
);
