// packages/core/docs/store-contract.md, "proving-your-store": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { MemoryStore } from '@toolfence/core';

// A stand-in for your store class, taking the URL of its backend.
class MyStore extends MemoryStore {
  constructor(readonly url: string) {
    super();
  }
}
const url = 'redis://127.0.0.1:6379';
declare function connectThroughAProxyThenFreezeIt(): MyStore;

// #region proving-your-store
// vitest
import { describeStoreConformance } from '@toolfence/core/testing';
describeStoreConformance('MyStore', () => new MyStore(url), {
  createUnavailableStore: () => new MyStore('redis://127.0.0.1:1'), // S7: strongly recommended
  createPeerStore: () => new MyStore(url), // another connection to the same backend, for the races
  createFrozenStore: () => connectThroughAProxyThenFreezeIt(), // S5: for a remote store
  frozenOperationTimeoutMs: 500, // that store's deadline
});

// node:test (no vitest needed)
import { registerStoreConformance } from '@toolfence/core/testing/node';
registerStoreConformance('MyStore', () => new MyStore(url), {
  /* same options */
});

// any runner: plain named async cases
import { storeConformanceCases } from '@toolfence/core/testing/node';
for (const c of storeConformanceCases(() => new MyStore(url))) await c.run();
// #endregion proving-your-store
