// Field case C03 (docs/field-cases.md) on RedisStore, against a real Redis (REDIS_URL); the
// scenario is test/cases/scenarios/c03.ts. Lease deadlines are judged by the Redis clock.
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import { connectRedis, deletePrefix, keysUnder, randomPrefix } from '../support/redis.js';
import { describeC03 } from './scenarios/c03.js';

const prefix = randomPrefix('c03');
let client: Redis;
let store: RedisStore;

beforeAll(async () => {
  client = await connectRedis();
  store = new RedisStore({ client, prefix });
});

afterAll(async () => {
  await store?.close();
  if (client !== undefined) {
    await deletePrefix(client, prefix);
    expect(await keysUnder(client, prefix)).toEqual([]);
    client.disconnect();
  }
});

describeC03('Redis', () => store, 'acme');
