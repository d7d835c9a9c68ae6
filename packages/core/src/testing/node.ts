/**
 * `@toolfence/core/testing/node`: the store conformance suite for `node:test` (no vitest needed).
 *
 * ```ts
 * // my-store.conformance.test.ts — run with: node --test
 * import { registerStoreConformance } from '@toolfence/core/testing/node';
 * registerStoreConformance('MyStore', () => new MyStore(...), {
 *   createUnavailableStore: () => new MyStore({ url: 'unreachable' }),
 * });
 * ```
 *
 * The contract the cases check: `docs/store-contract.md` in this package.
 */
import { after, describe, it } from 'node:test';
import { type StoreConformanceOptions, type StoreFactory, storeConformanceSuite } from './cases/index.js';

// The cases and their shapes (the same exports from both entry points).
export * from './cases/index.js';

/**
 * Register every conformance case as a `node:test` test inside one `describe`, with one store
 * shared by the cases (closed, after `options.cleanup`, when they are done).
 */
export function registerStoreConformance(
  name: string,
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): void {
  describe(`${name} conforms to the idempotency store contract`, () => {
    const suite = storeConformanceSuite(createStore, options);
    after(() => suite.close());
    for (const conformanceCase of suite.cases) {
      it(conformanceCase.name, { timeout: conformanceCase.timeoutMs }, () => conformanceCase.run());
    }
  });
}
