import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { Idempotency, type ResolvedPolicy } from '../policy/idempotency-policy.js';
import type { RecordedError } from '../store/idempotency-store.js';
import type { CallState } from './call-state.js';
import type { LeaseLossReason } from './lease-keeper.js';
import { describeError } from './recorded-error.js';

// How the guard classifies and builds the errors of a call; how it describes them is
// recorded-error.ts.

/** The error a body's signal is aborted with when its lease is lost. */
export function leaseLostError(
  key: string,
  tool: string,
  fence: number,
  reason: LeaseLossReason,
): LeaseLostError {
  const detail =
    reason.kind === 'expired'
      ? 'the store could not be reached to renew it before it expired'
      : reason.detail === 'stale'
        ? 'another worker took the call over with a higher fencing token'
        : reason.detail === 'settled'
          ? 'the record was settled by someone else'
          : 'the record no longer exists';
  return new LeaseLostError(
    { key, tool, fence, reason: detail },
    reason.kind === 'expired' ? { cause: reason.error } : undefined,
  );
}

/** The reason recorded when an attempt that entered its body finds its record gone (rule G1). */
export function recordLost(): Error {
  const error = new Error(
    'the record of an attempt that had entered its body was lost (released, forgotten, expired or ' +
      'lost by the store) before its outcome was recorded; the effect may have happened',
  );
  error.name = 'RecordLost';
  return error;
}

/** An EFFECTFUL call's unknown outcome, for the caller of `state`'s call. */
export function indeterminateOutcomeError(
  state: CallState,
  attempt: { readonly attempt: number; readonly fence: number },
  reason: RecordedError,
  options?: { cause?: unknown },
): IndeterminateOutcomeError {
  return new IndeterminateOutcomeError(
    {
      key: state.ref.key,
      tool: state.call.tool,
      attempt: attempt.attempt,
      fence: attempt.fence,
      reasonType: reason.type,
      reason: reason.message,
      ...(state.call.callId === undefined ? {} : { callId: state.call.callId }),
    },
    options,
  );
}

/** An IDEMPOTENT call given up after `attempt` lost attempts, for the caller of `state`'s call. */
export function executionAbandonedError(
  state: CallState,
  attempt: { readonly attempt: number; readonly fence: number },
): ExecutionAbandonedError {
  return new ExecutionAbandonedError({
    key: state.ref.key,
    tool: state.call.tool,
    attempt: attempt.attempt,
    fence: attempt.fence,
    ...(state.call.callId === undefined ? {} : { callId: state.call.callId }),
  });
}

/** A store's error as the guard reports it: toolfence errors as they are, others as unavailable (rule G6). */
export function asStoreError(operation: string, error: unknown): unknown {
  if (ToolfenceError.isInstance(error)) return error;
  return new StoreUnavailableError(operation, describeError(error).message, { cause: error });
}

/** The policy's `isNoEffectError` vouches that an EFFECTFUL body's error had no effect. */
export function safeNoEffect(policy: ResolvedPolicy, error: unknown): boolean {
  if (policy.kind !== Idempotency.EFFECTFUL) return false;
  try {
    return policy.isNoEffectError(error) === true;
  } catch {
    // A predicate that throws cannot vouch for "no effect": stay conservative.
    return false;
  }
}
