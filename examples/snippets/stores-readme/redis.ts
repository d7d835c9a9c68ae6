// packages/stores/README.md, "redis": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.

// #region redis
import { Guard } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { Redis } from 'ioredis'; // or Cluster

const guard = new Guard({ store: new RedisStore({ client: new Redis(process.env.REDIS_URL!) }) });

// #endregion redis
export { guard };
