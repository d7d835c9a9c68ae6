/**
 * The store conformance cases as plain named async functions, for any test runner. The contract
 * they check is `docs/store-contract.md` in this package (`@toolfence/core/docs/store-contract.md`).
 *
 * - {@link storeConformanceSuite}: one store (and its peers) shared by every case; call `close()`
 *   after the last case. `describeStoreConformance` (vitest, `@toolfence/core/testing`) and
 *   `registerStoreConformance` (node:test, `@toolfence/core/testing/node`) use it.
 * - {@link storeConformanceCases}: every case makes its own store (and peers) and closes it.
 *
 * Each case works under tenants of its own (random, none a prefix of another) and erases them
 * with `forget` when it ends, so the store may hold other data.
 *
 * No assertion library is imported: failures are `AssertionError`s from `node:assert`.
 */

import { approvalCases } from './approvals.js';
import { approvalsNotRunCase } from './approvals-gate.js';
import type { CaseDefinition, Stores } from './case-context.js';
import { closeStores, openStores, runnableCase, type StoreProvider } from './case-runner.js';
import { claimCases } from './claims.js';
import { listingCases } from './listing.js';
import { liveHolderCases } from './live-holders.js';
import type {
  StoreConformanceCase,
  StoreConformanceOptions,
  StoreConformanceSuite,
  StoreFactory,
} from './options.js';
import { outageCases } from './outages.js';
import { approvalRaceCases } from './races-approvals.js';
import { claimRaceCases } from './races-claims.js';
import { holderRaceCases } from './races-holder.js';
import { recordRaceCases } from './races-records.js';
import { recordCases } from './records.js';
import { resolutionCases } from './resolutions.js';
import { resolveConditionCases } from './resolve-conditions.js';
import { storeInputCases } from './store-input.js';
import { storeRuleCases } from './store-rules.js';
import { waitingCases } from './waiting.js';

export type { StoreConformanceCase, StoreConformanceOptions, StoreConformanceSuite, StoreFactory };

/**
 * Every conformance case, topic by topic, in the order they run. A new topic is a file in this
 * folder that exports its `CaseDefinition`s (see claims.ts) and one line here.
 */
function allCases(options: StoreConformanceOptions): readonly CaseDefinition[] {
  return [
    ...claimCases,
    ...recordCases,
    ...waitingCases,
    ...claimRaceCases,
    ...holderRaceCases,
    ...recordRaceCases,
    ...storeInputCases,
    ...storeRuleCases,
    ...outageCases(options),
    ...listingCases,
    ...resolutionCases,
    ...resolveConditionCases,
    ...liveHolderCases,
    // Explicitly not run for a store still gaining approvals: one case says so, and fails once the
    // store has decideApproval (approvals-gate.ts).
    ...(options.skipApprovals === undefined
      ? [...approvalCases, ...approvalRaceCases]
      : [approvalsNotRunCase(options.skipApprovals)]),
  ];
}

function buildCases(provider: StoreProvider, options: StoreConformanceOptions): StoreConformanceCase[] {
  return allCases(options).map((definition) => runnableCase(definition, provider, options));
}

/**
 * The cases over ONE store shared by all of them (created on the first case that runs), plus
 * `close()` to call after the last one.
 */
export function storeConformanceSuite(
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): StoreConformanceSuite {
  let opened: Promise<Stores> | undefined;
  const provider: StoreProvider = {
    open: () => {
      opened ??= openStores(createStore, options);
      return opened;
    },
    done: async () => undefined,
  };
  return {
    cases: buildCases(provider, options),
    close: async () => {
      if (opened === undefined) return;
      const stores = await opened.catch(() => undefined);
      if (stores === undefined) return;
      try {
        await options.cleanup?.(stores.store);
      } finally {
        await closeStores(stores);
      }
    },
  };
}

/**
 * The cases, each self-contained: it makes its own store (and peers) with `createStore` and closes
 * it when it ends. `options.cleanup` is not called (each case forgets its own tenants).
 */
export function storeConformanceCases(
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): StoreConformanceCase[] {
  return buildCases({ open: () => openStores(createStore, options), done: closeStores }, options);
}
