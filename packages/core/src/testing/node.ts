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
import type { StoreConformanceCase, StoreConformanceOptions, StoreFactory } from './cases/index.js';
import { registerSuite } from './register-suite.js';

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
  const test = (conformanceCase: StoreConformanceCase) =>
    it(conformanceCase.name, { timeout: conformanceCase.timeoutMs }, () => conformanceCase.run());
  registerSuite({ describe, after, test }, name, createStore, options);
}
