// Run by `node --test` (see node-runner.test.ts): MemoryStore through the node:test entry of the
// conformance suite, which must not load vitest.
import { MemoryStore } from '@toolfence/core';
import { registerStoreConformance } from '@toolfence/core/testing/node';

registerStoreConformance('MemoryStore', () => new MemoryStore(), {
  createUnavailableStore: async () => {
    const store = new MemoryStore();
    await store.close();
    return store;
  },
});
