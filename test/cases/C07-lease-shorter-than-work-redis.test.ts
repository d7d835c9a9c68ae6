// Field case C07 (docs/field-cases.md, C07) on RedisStore, against a real
// Redis (REDIS_URL).
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import { connectRedis, deletePrefix, keysUnder, randomPrefix } from '../support/redis.js';
import { describeC07 } from './scenarios/c07.js';

const prefix = randomPrefix('c07');
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

describeC07('Redis', () => store, `r-${prefix}`);
