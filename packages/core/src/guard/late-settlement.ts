import { Idempotency } from '../policy/idempotency-policy.js';
import type { Holder, RecordedError } from '../store/idempotency-store.js';
import { describeError, indeterminateOutcomeError, safeNoEffect } from './call-errors.js';
import type { AttemptInfo, CallState } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { isRecorded } from './outcome-recording.js';

// A body that settles after its caller was answered: settled in the store all the same.

/** Why the caller was answered before the body settled (rule G4). */
export interface Interruption {
  readonly kind: 'timeout' | 'abort';
  readonly error: unknown;
}

/** An attempt whose body is running: its holder, and the keeper that renews its lease. */
export interface HeldAttempt {
  readonly runtime: GuardRuntime;
  readonly state: CallState;
  readonly holder: Holder;
  readonly info: AttemptInfo;
  readonly keeper: LeaseKeeper;
}

/**
 * Rule G4: a timeout or the caller's abort while the body runs is answered at once. The claim is
 * kept (and renewed) until the body settles and is then settled as usual, so a retry waits and
 * replays instead of running beside it. EFFECTFUL: unknown to this caller; the record stays
 * `in_progress` under a renewed lease until the body settles (its value completes the record, its
 * error marks it indeterminate). Returns the error to throw.
 */
export function answerInterruption<T>(
  attempt: HeldAttempt,
  bodyPromise: Promise<T>,
  interruption: Interruption | undefined,
  durationMs: number,
): unknown {
  const { runtime, state, info } = attempt;
  const cause = interruption?.error;
  const recordedCause = runtime.recordError(cause);
  settleInterruptedBody(attempt, bodyPromise, recordedCause);
  if (state.policy.kind === Idempotency.IDEMPOTENT) {
    runtime.emit('tool.failed', state, info, { error: recordedCause, durationMs });
    return cause;
  }
  // Issue 27, item 2: answered before the body settled is not (yet) a record that needs a
  // decision; `tool.indeterminate` comes only if the body then fails (its record is then left
  // indeterminate): while it runs, its lease is renewed and the record stays in progress.
  runtime.emit('tool.interrupted', state, info, { error: recordedCause, durationMs });
  // The caller gets the reason whole; the store and the events get what describeError allows.
  return indeterminateOutcomeError(state, info, describeError(cause), { cause });
}

/** Settle the claim of an interrupted body when it settles; the lease is kept until then. */
function settleInterruptedBody<T>(
  attempt: HeldAttempt,
  bodyPromise: Promise<T>,
  recordedCause: RecordedError,
): void {
  const { runtime, state, holder, keeper } = attempt;
  const { policy, ref } = state;
  // The lease is renewed until the body settles, however long after its caller was answered:
  // while it runs the record stays `in_progress` under a live lease, so a retry waits
  // (OutcomePendingError) and an operator is refused (HolderAliveError) instead of being offered
  // a decision about a body that may still take effect (issue #27: marking it indeterminate and
  // stopping the renewals let an operator's release and a retry pay twice).
  bodyPromise
    .then(
      (value) => completeLate(attempt, value),
      async (error: unknown) => {
        if (policy.kind === Idempotency.IDEMPOTENT || safeNoEffect(policy, error)) {
          await runtime.releaseQuietly(ref, holder);
        } else {
          await runtime.markLateIndeterminate(state, holder, attempt.info, runtime.recordError(error));
        }
      },
    )
    .catch(async () => {
      // Unrecordable (the codec or the store refused it): settle the way the kind requires.
      if (policy.kind === Idempotency.EFFECTFUL) {
        await runtime
          .markLateIndeterminate(state, holder, attempt.info, recordedCause)
          .catch(() => undefined);
      } else {
        await runtime.releaseQuietly(ref, holder);
      }
    })
    .finally(() => keeper.stop());
}

/** Record the value of a body that returned after its caller was answered (rule G4). */
async function completeLate(attempt: HeldAttempt, value: unknown): Promise<void> {
  const { runtime, state, holder } = attempt;
  const encoded = runtime.encodeOutcome(value, state.call.tool);
  const result = await runtime.store.complete(state.ref, holder, encoded, state.policy.retentionMs);
  const recorded = isRecorded(result, holder, encoded);
  runtime.emit(
    recorded ? 'tool.completed' : 'tool.stale_result',
    state,
    attempt.info,
    recorded ? { recorded } : {},
  );
}

/** A superseded attempt that still returns: try to record it; a stale one is reported. */
export function recordLate<T>(attempt: HeldAttempt, bodyPromise: Promise<T>): void {
  const { runtime, state, holder, info } = attempt;
  bodyPromise.then(
    async (value) => {
      try {
        const result = await runtime.store.complete(
          state.ref,
          holder,
          runtime.encodeOutcome(value, state.call.tool),
          state.policy.retentionMs,
        );
        if (result.status === 'completed') {
          runtime.emit('tool.completed', state, info, { recorded: true });
        } else {
          runtime.emit('tool.stale_result', state, info);
        }
      } catch {
        // Nothing more can be done for a late result the store will not take.
      }
    },
    () => undefined,
  );
}
