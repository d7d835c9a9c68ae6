// A probe asked in the background for an interrupted call's record (rule G4): its caller was
// answered before the body settled, and the body then failed (docs/reconcile.md).
import type { HeldClaim } from './held-claim.js';
import { probeRecord, reconcileEvent } from './reconcile.js';

/**
 * After its caller was answered (rule G4), an interrupted call's body failed and left its record
 * indeterminate: the probe is asked in the background, about that holder only. Best effort.
 */
export function reconcileLate(held: HeldClaim): void {
  const { runtime, state, holder } = held;
  const reconcile = state.policy.reconcile;
  if (reconcile === undefined) return;
  void (async () => {
    const record = await runtime.store.get(state.ref);
    if (record?.state !== 'indeterminate' || record.fence !== holder.fence || record.owner !== holder.owner) {
      return;
    }
    const report = await probeRecord({
      runtime,
      ref: state.ref,
      record,
      reconcile,
      arguments: state.call.arguments,
      signal: undefined,
      apply: true,
      fallbackRetentionMs: state.policy.retentionMs,
    });
    runtime.emitOperator('tool.reconciled', state.ref, record, { reconcile: reconcileEvent(report) });
  })().catch(() => undefined);
}
