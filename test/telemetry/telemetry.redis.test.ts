// The telemetry scenarios (scenarios.ts) on RedisStore, on the shared Redis under a random key
// prefix that is deleted afterwards (the server is never flushed).
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll } from 'vitest';
import { connectRedis, deletePrefix, randomPrefix } from '../support/redis.js';
import { describeTelemetry } from './scenarios.js';

const prefix = randomPrefix('otel');
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
    client.disconnect();
  }
});

describeTelemetry('RedisStore (shared Redis, random prefix)', () => store, 'RedisStore');
