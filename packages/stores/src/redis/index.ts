// `@toolfence/stores/redis`: the public API of the Redis store. Named exports only.
export { RedisStore, type RedisStoreOptions } from './redis-store.js';
