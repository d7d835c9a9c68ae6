// docs/redis.md, "production-requirements-read-first": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region production-requirements-read-first
import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Cluster, Redis } from 'ioredis';

const store = new RedisStore({ client: new Redis(process.env.REDIS_URL!) });
// or: new RedisStore({ client: new Cluster([{ host: '10.0.0.1', port: 6379 }]) })
const guard = new Guard({ store });
// ...
await store.close(); // closes the store's own subscriber connection, not your client
// #endregion production-requirements-read-first

export { Cluster, guard };
