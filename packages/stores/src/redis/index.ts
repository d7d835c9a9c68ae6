// `@toolfence/stores/redis`: the public API of the Redis store. Named exports only.
export type { RecordNames } from './names.js';
export {
  type EvictionPolicyCheck,
  type RedisClaimPath,
  RedisStore,
  type RedisStoreOptions,
} from './redis-store.js';
