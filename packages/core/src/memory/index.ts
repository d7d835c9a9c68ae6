// The MemoryStore, as `@toolfence/core` exports it.
export { MemoryStore } from './memory-store.js';
export type { Clock, MemoryStoreOptions } from './options.js';
