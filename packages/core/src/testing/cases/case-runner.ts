// How a case definition becomes a runnable case: open the stores (shared or its own), run the
// body, forget the tenants it made, close what it opened; a cleanup failure fails a passing case
// but never hides the failure of a failing one.
import type { IdempotencyStore } from '../../store/idempotency-store.js';
import { CaseContext, type CaseDefinition, type Stores } from './case-context.js';
import type { StoreConformanceCase, StoreConformanceOptions, StoreFactory } from './options.js';

/** Where a case gets its stores, and what it does with them when it ends. */
export interface StoreProvider {
  open(): Promise<Stores>;
  done(stores: Stores): Promise<void>;
}

export async function openStores(
  createStore: StoreFactory,
  options: StoreConformanceOptions,
): Promise<Stores> {
  const store = await createStore();
  const peers: IdempotencyStore[] = [];
  if (options.createPeerStore !== undefined) {
    for (let index = 0; index < (options.peerCount ?? 3); index++)
      peers.push(await options.createPeerStore());
  }
  return { store, peers };
}

export async function closeStores(stores: Stores): Promise<void> {
  for (const peer of stores.peers) await peer.close();
  await stores.store.close();
}

/** `definition` as a case that runs on the stores of `provider`. */
export function runnableCase(
  definition: CaseDefinition,
  provider: StoreProvider,
  options: StoreConformanceOptions,
): StoreConformanceCase {
  return {
    name: definition.name,
    timeoutMs: definition.timeoutMs,
    run: async () => {
      const stores = await provider.open();
      const context = new CaseContext(stores, options);
      let failure: { error: unknown } | undefined;
      try {
        await definition.run(context);
      } catch (error) {
        failure = { error };
      }
      try {
        for (const tenant of context.tenants) await stores.store.forget({ tenant });
      } catch (error) {
        // A cleanup failure fails a passing case; it never hides the failure of a failing one.
        failure ??= { error };
      }
      await provider.done(stores);
      if (failure !== undefined) throw failure.error;
    },
  };
}
