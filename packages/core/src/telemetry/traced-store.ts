import { AsyncLocalStorage } from 'node:async_hooks';
// The store contract's types, as `contract.X` (docs/store-contract.md in @toolfence/core).
import type * as contract from '../store/idempotency-store.js';
import type { CallTrace } from './call-trace.js';

// The guard's store, seen through the call that uses it: each round trip made on behalf of a
// traced call (in its async context: the claim loop, the lease keeper's timers) is timed on that
// call's trace. A round trip outside a traced call passes straight through.

const calls = new AsyncLocalStorage<CallTrace>();

/** Run `fn` as the traced call `trace`: the store round trips it makes are timed on it. */
export function runTraced<T>(trace: CallTrace, fn: () => T): T {
  return calls.run(trace, fn);
}

function timed<R>(operation: string, send: () => Promise<R>): Promise<R> {
  const trace = calls.getStore();
  if (trace === undefined || !trace.timed) return send();
  const startedMs = trace.storeStarted();
  return send().then(
    (result) => {
      trace.storeEnded(operation, startedMs, result, false, undefined);
      return result;
    },
    (error: unknown) => {
      trace.storeEnded(operation, startedMs, undefined, true, error);
      throw error;
    },
  );
}

/** The store a {@link TracedStore} wraps, or `store` itself: what errors and operators name. */
export function untraced(store: contract.IdempotencyStore): contract.IdempotencyStore {
  return store instanceof TracedStore ? store.inner : store;
}

/** A store that times each round trip of a traced call and otherwise does exactly what `inner` does. */
export class TracedStore implements contract.IdempotencyStore {
  readonly specificationVersion: 'v1';
  /**
   * The inner store's operator reads, never a guarded call's, passed straight through; absent
   * when the inner store lacks them (a store written for an older contract), so the guard's
   * operator methods still refuse such a store with StoreConfigurationError.
   */
  declare readonly list: (options: contract.ListOptions) => Promise<contract.ListPage>;
  declare readonly resolutions: (ref: contract.RecordRef) => Promise<readonly contract.ResolutionEntry[]>;
  /** The inner store's approvals, absent when it keeps none (the guard then refuses to need one). */
  declare readonly decideApproval?: (
    ref: contract.RecordRef,
    decision: contract.ApprovalDecision,
    retentionMs: number,
  ) => Promise<contract.DecideResult>;

  constructor(readonly inner: contract.IdempotencyStore) {
    this.specificationVersion = inner.specificationVersion;
    const self = this as { -readonly [K in 'list' | 'resolutions' | 'decideApproval']?: TracedStore[K] };
    if (typeof inner.list === 'function') self.list = (options) => inner.list(options);
    if (typeof inner.resolutions === 'function') self.resolutions = (ref) => inner.resolutions(ref);
    const decideApproval = inner.decideApproval;
    if (typeof decideApproval === 'function') {
      self.decideApproval = (ref, decision, retentionMs) =>
        decideApproval.call(inner, ref, decision, retentionMs);
    }
  }

  claim(ref: contract.RecordRef, options: contract.ClaimOptions): Promise<contract.ClaimResult> {
    return timed('claim', () => this.inner.claim(ref, options));
  }

  renew(ref: contract.RecordRef, holder: contract.Holder, leaseMs: number): Promise<contract.RenewResult> {
    return timed('renew', () => this.inner.renew(ref, holder, leaseMs));
  }

  complete(
    ref: contract.RecordRef,
    holder: contract.Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<contract.CompleteResult> {
    return timed('complete', () => this.inner.complete(ref, holder, outcome, retentionMs));
  }

  release(ref: contract.RecordRef, holder: contract.Holder): Promise<contract.ReleaseResult> {
    return timed('release', () => this.inner.release(ref, holder));
  }

  markIndeterminate(
    ref: contract.RecordRef,
    holder: contract.Holder,
    error: contract.RecordedError,
    retentionMs: number,
  ): Promise<contract.MarkIndeterminateResult> {
    return timed('markIndeterminate', () => this.inner.markIndeterminate(ref, holder, error, retentionMs));
  }

  get(ref: contract.RecordRef): Promise<contract.IdempotencyRecord | null> {
    return timed('get', () => this.inner.get(ref));
  }

  resolve(
    ref: contract.RecordRef,
    resolution: contract.Resolution,
    retentionMs: number,
  ): Promise<contract.ResolveResult> {
    return this.inner.resolve(ref, resolution, retentionMs);
  }

  forget(options: { readonly tenant: string }): Promise<number> {
    return this.inner.forget(options);
  }

  waitForSettle(ref: contract.RecordRef, options: contract.WaitOptions): Promise<contract.WaitResult> {
    return timed('waitForSettle', () => this.inner.waitForSettle(ref, options));
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
