/**
 * `@toolfence/core/testing`: the conformance suite every idempotency store must pass, ours or a
 * user's own, registered as vitest tests. The contract it checks is written for store authors in
 * `docs/store-contract.md` of this package (`node_modules/@toolfence/core/docs/store-contract.md`).
 *
 * ```ts
 * import { describeStoreConformance } from '@toolfence/core/testing';
 * describeStoreConformance('MyStore', () => new MyStore(...), {
 *   createUnavailableStore: () => new MyStore({ url: 'unreachable' }),
 *   createPeerStore: () => new MyStore(...), // a second connection to the same backend, for races
 * });
 * ```
 *
 * Other runners: `registerStoreConformance` from `@toolfence/core/testing/node` (node:test), or
 * `storeConformanceCases` / `storeConformanceSuite` (plain named async cases, exported here and
 * from `@toolfence/core/testing/node`).
 *
 * Time-dependent cases use short real leases (a remote store's clock is real), so the suite
 * runs in seconds.
 */
import { afterAll, describe, it } from 'vitest';
import type { StoreConformanceCase, StoreConformanceOptions, StoreFactory } from './cases/index.js';
import { registerSuite } from './register-suite.js';

// The cases and their shapes (the same exports from both entry points).
export * from './cases/index.js';

/**
 * Register the conformance tests of the store contract (docs/store-contract.md in this package)
 * for the store `createStore` makes, as one vitest `describe` block. One store is created for the
 * suite (and `options.peerCount` peers when `options.createPeerStore` is given); every case uses
 * tenants of its own and forgets them when it ends, so the store may be shared with other data.
 */
export function describeStoreConformance(
  name: string,
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): void {
  const test = (conformanceCase: StoreConformanceCase) =>
    it(conformanceCase.name, () => conformanceCase.run(), conformanceCase.timeoutMs);
  registerSuite({ describe, after: afterAll, test }, name, createStore, options);
}
