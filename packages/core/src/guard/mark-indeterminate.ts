import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import type { RecordedError } from '../store/idempotency-store.js';
import { indeterminateOutcomeError } from './call-errors.js';
import type { CallState } from './call-state.js';
import type { HeldClaim } from './held-claim.js';
import { reconcileLate } from './reconcile-late.js';
import { describeError } from './recorded-error.js';

// An EFFECTFUL call whose outcome nobody can state: its record is left indeterminate for an
// operator, and the listener and the metrics hear it.

/** Interrupted calls whose record was already reported left indeterminate. */
const lateMarked = new WeakSet<CallState>();

/** Mark the holder's record indeterminate (best effort) and return the error for the caller. */
export async function markIndeterminate(
  held: HeldClaim,
  error: unknown,
  durationMs: number,
): Promise<IndeterminateOutcomeError> {
  const { runtime, state, holder, info } = held;
  const recorded = runtime.recordError(error);
  try {
    await runtime.store.markIndeterminate(state.ref, holder, recorded, state.policy.retentionMs);
  } catch {
    // The claim stays in progress; when its lease expires a claimer marks it indeterminate.
  }
  runtime.emit('tool.indeterminate', state, info, { error: recorded, durationMs });
  // The caller, in this process, gets the reason whole (it holds the error as `cause` anyway);
  // only what is stored and emitted follows describeError.
  return indeterminateOutcomeError(state, info, describeError(error), { cause: error });
}

/**
 * The record of an interrupted call (its caller already answered, `tool.interrupted`) is left
 * indeterminate, now that its body failed or ran past waitTimeoutMs: the listener hears
 * `tool.indeterminate`, and the metric gets a late point. Best effort: the store's mark may have
 * failed, and then the lease's expiry makes the record indeterminate.
 */
export async function markLateIndeterminate(held: HeldClaim, recorded: RecordedError): Promise<void> {
  const { runtime, state, holder, info } = held;
  try {
    await runtime.store.markIndeterminate(state.ref, holder, recorded, state.policy.retentionMs);
  } finally {
    // Once per call: the grace timer and a body failing after it both mark.
    if (!lateMarked.has(state)) {
      lateMarked.add(state);
      runtime.emit('tool.indeterminate', state, info, { error: recorded });
      state.trace?.lateIndeterminate(recorded.type);
      // The record needs a decision now: a policy's probe is asked first (docs/reconcile.md).
      reconcileLate(held);
    }
  }
}
