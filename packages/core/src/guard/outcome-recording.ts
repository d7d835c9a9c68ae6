import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import type { CompleteResult, Holder, IdempotencyRecord } from '../store/idempotency-store.js';
import { asStoreError } from './call-errors.js';
import { type Answer, type CallProgress, SUPERSEDED } from './guard-types.js';
import type { HeldClaim } from './held-claim.js';
import { markIndeterminate } from './mark-indeterminate.js';
import { describeError } from './recorded-error.js';
import { fitsBefore, stepDeadlineFromNow, withinStep } from './step-budget.js';

/** Pauses before the second and third tries of `complete` (the first is sent at once). */
const RETRY_DELAYS_MS = [50, 250];

/** A refusal (StoreInputError and the like) is never retried; an outage is. */
function isRefusal(error: unknown): boolean {
  return ToolfenceError.isInstance(error) && !StoreUnavailableError.isInstance(error);
}

/**
 * Record a successful body's value under its holder. Unrecorded because the store is down: the
 * caller still gets the value. Rule G5: an outcome no store can hold is settled at once.
 * Superseded or gone: SUPERSEDED, with the value kept in `progress` for rule G1.
 */
export async function recordOutcome<T>(
  held: HeldClaim,
  value: T,
  durationMs: number,
  progress: CallProgress,
): Promise<Answer<T> | typeof SUPERSEDED> {
  const { runtime, state, holder, info: attemptInfo } = held;
  const { ref, policy } = state;
  let encoded: string;
  let result: CompleteResult;
  try {
    encoded = runtime.encodeOutcome(value, state.call.tool);
    // The first try awaited here (as completeWithRetry does, inlined): no promise derived from it
    // and no retry closure on a call that records at once.
    const deadline = stepDeadlineFromNow(runtime.stepBudget);
    try {
      result = await completeOnce(held, encoded, deadline);
    } catch (firstError) {
      result = await completeAgain(held, encoded, firstError, deadline);
    }
  } catch (error) {
    if (StoreUnavailableError.isInstance(error) || !ToolfenceError.isInstance(error)) {
      // Unrecorded: the lease will expire and the record turn indeterminate (EFFECTFUL) or be
      // re-run (IDEMPOTENT). This caller knows the answer, so it gets it.
      runtime.emit('tool.completed', state, attemptInfo, { durationMs, recorded: false });
      return { value, encoded: undefined, ...attemptInfo };
    }
    // Rule G5: no store can hold this outcome (the codec failed, or the store refused it).
    // Settle at once the way the kind requires; never leave it to the lease.
    if (policy.kind === Idempotency.EFFECTFUL) {
      throw await markIndeterminate(held, error, durationMs);
    }
    runtime.emit('tool.failed', state, attemptInfo, { error: describeError(error), durationMs });
    await runtime.releaseQuietly(ref, holder);
    throw error;
  }
  if (isRecorded(result, holder, encoded)) {
    runtime.emit('tool.completed', state, attemptInfo, { durationMs, recorded: true });
    // Field by field: a spread after other fields is a runtime copy, on every first call.
    return { value, encoded, attempt: attemptInfo.attempt, fence: attemptInfo.fence };
  }
  // Superseded (taken over, settled by someone else) or gone (released, forgotten, expired, lost
  // by the store). Rule G1: the caller asks the store again, and never runs the body again;
  // the value it knows is recorded in a new life if the key is free.
  runtime.emit('tool.stale_result', state, attemptInfo, { durationMs });
  progress.ownResult = { value, encoded };
  return SUPERSEDED;
}

/** Complete, retried on an outage (never on a refusal: StoreInputError and the like). */
export async function completeWithRetry(held: HeldClaim, encoded: string): Promise<CompleteResult> {
  const deadline = stepDeadlineFromNow(held.runtime.stepBudget);
  try {
    return await completeOnce(held, encoded, deadline);
  } catch (firstError) {
    return completeAgain(held, encoded, firstError, deadline);
  }
}

/** The first try of complete, raced against the step's deadline only when the budget says so. */
function completeOnce(held: HeldClaim, encoded: string, deadline: number): Promise<CompleteResult> {
  const { runtime, state, holder } = held;
  const budget = runtime.stepBudget;
  return budget.boundsFirstTry
    ? withinStep('complete', budget, deadline, () =>
        runtime.store.complete(state.ref, holder, encoded, state.policy.retentionMs),
      )
    : runtime.store.complete(state.ref, holder, encoded, state.policy.retentionMs);
}

/** The tries after the first (which failed with `firstError`), each after its pause. */
async function completeAgain(
  held: HeldClaim,
  encoded: string,
  firstError: unknown,
  deadline: number,
): Promise<CompleteResult> {
  const { runtime, state, holder } = held;
  const { ref } = state;
  const { retentionMs } = state.policy;
  let lastError = firstError;
  for (const delayMs of RETRY_DELAYS_MS) {
    if (isRefusal(lastError)) throw lastError;
    // One budget per step (step-budget.ts): no try is started that could not finish in it.
    if (!fitsBefore(deadline, delayMs)) break;
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    try {
      return await withinStep('complete', runtime.stepBudget, deadline, () =>
        runtime.store.complete(ref, holder, encoded, retentionMs),
      );
    } catch (error) {
      lastError = error;
    }
  }
  if (isRefusal(lastError)) throw lastError;
  throw asStoreError('complete', lastError);
}

/**
 * The holder's outcome is in the store: `complete` answered `completed`, or `stale` with this
 * holder's own completion (a retried complete whose first try was applied, its reply lost).
 */
export function isRecorded(result: CompleteResult, holder: Holder, encoded: string): boolean {
  return (
    result.status === 'completed' ||
    (result.status === 'stale' && isOwnCompletion(result.record, holder, encoded))
  );
}

/**
 * A complete answered `stale` that this holder's own earlier try applied (its reply was lost).
 * The outcome must match too: an operator who resolved this holder's indeterminate record
 * recorded another outcome under the same fence and owner (found by the spin model).
 */
function isOwnCompletion(record: IdempotencyRecord, holder: Holder, encoded: string): boolean {
  return (
    record.state === 'completed' &&
    record.fence === holder.fence &&
    record.owner === holder.owner &&
    record.outcome === encoded
  );
}
