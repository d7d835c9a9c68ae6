// What `describeStoreConformance` (vitest) and `registerStoreConformance` (node:test) share: one
// `describe` block per store, the suite's one store shared by its cases and closed after the last.
import {
  type StoreConformanceCase,
  type StoreConformanceOptions,
  type StoreFactory,
  storeConformanceSuite,
} from './cases/index.js';

/** What a test runner gives the suite: a block, a hook after the block, and one test per case. */
export interface SuiteRunner {
  readonly describe: (name: string, body: () => void) => unknown;
  readonly after: (hook: () => Promise<void>) => unknown;
  readonly test: (conformanceCase: StoreConformanceCase) => unknown;
}

/** Register every conformance case for the store `createStore` makes, with `runner`. */
export function registerSuite(
  runner: SuiteRunner,
  name: string,
  createStore: StoreFactory,
  options: StoreConformanceOptions,
): void {
  runner.describe(`${name} conforms to the idempotency store contract`, () => {
    const suite = storeConformanceSuite(createStore, options);
    runner.after(() => suite.close());
    for (const conformanceCase of suite.cases) runner.test(conformanceCase);
  });
}
