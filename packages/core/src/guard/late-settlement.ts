import { Idempotency } from '../policy/idempotency-policy.js';
import type { RecordedError } from '../store/idempotency-store.js';
import { indeterminateOutcomeError, safeNoEffect } from './call-errors.js';
import type { HeldClaim } from './held-claim.js';
import { markLateIndeterminate } from './mark-indeterminate.js';
import { isRecorded } from './outcome-recording.js';
import { describeError } from './recorded-error.js';

// A body that settles after its caller was answered: settled in the store all the same.

/** Why the caller was answered before the body settled (rule G4). */
export interface Interruption {
  readonly kind: 'timeout' | 'abort';
  readonly error: unknown;
}

/** A body still running after its caller was answered, and how to stop renewing its lease. */
export interface RunningBody<T> {
  readonly held: HeldClaim;
  readonly body: Promise<T>;
  /** Stops the lease's renewals; called once the body and its claim are settled. */
  readonly stopLease: () => void;
}

/**
 * Rule G4: a timeout or the caller's abort while the body runs is answered at once. The claim is
 * kept (and renewed) until the body settles and is then settled as usual, so a retry waits and
 * replays instead of running beside it. EFFECTFUL: unknown to this caller; the record stays
 * `in_progress` under a renewed lease until the body settles (its value completes the record, its
 * error marks it indeterminate). Returns the error to throw.
 */
export function answerInterruption<T>(
  running: RunningBody<T>,
  interruption: Interruption | undefined,
  durationMs: number,
): unknown {
  const { runtime, state, info } = running.held;
  const cause = interruption?.error;
  const recordedCause = runtime.recordError(cause);
  settleInterruptedBody(running, recordedCause);
  if (state.policy.kind === Idempotency.IDEMPOTENT) {
    runtime.emit('tool.failed', state, info, { error: recordedCause, durationMs });
    return cause;
  }
  // Answered before the body settled is not (yet) a record that needs a decision:
  // `tool.indeterminate` comes only if the body then fails and leaves its record indeterminate.
  runtime.emit('tool.interrupted', state, info, { error: recordedCause, durationMs });
  // The caller gets the reason whole; the store and the events get what describeError allows.
  return indeterminateOutcomeError(state, info, describeError(cause), { cause });
}

/** Settle the claim of an interrupted body when it settles; the lease is kept until then. */
function settleInterruptedBody<T>(running: RunningBody<T>, recordedCause: RecordedError): void {
  const { held } = running;
  const { runtime, state, holder } = held;
  const { policy, ref } = state;
  // While the body runs its record stays `in_progress` under a live lease, so a retry waits and
  // an operator is refused (HolderAliveError): marking it indeterminate and stopping the
  // renewals let an operator's release and a retry pay twice.
  running.body
    .then(
      (value) => completeLate(held, value),
      async (error: unknown) => {
        if (policy.kind === Idempotency.IDEMPOTENT || safeNoEffect(policy, error)) {
          await runtime.releaseQuietly(ref, holder);
        } else {
          await markLateIndeterminate(held, runtime.recordError(error));
        }
      },
    )
    .catch(async () => {
      // Unrecordable (the codec or the store refused it): settle the way the kind requires.
      if (policy.kind === Idempotency.EFFECTFUL) {
        await markLateIndeterminate(held, recordedCause).catch(() => undefined);
      } else {
        await runtime.releaseQuietly(ref, holder);
      }
    })
    .finally(running.stopLease);
}

/** Record the value of a body that returned after its caller was answered (rule G4). */
async function completeLate(held: HeldClaim, value: unknown): Promise<void> {
  const { runtime, state, holder } = held;
  const encoded = runtime.encodeOutcome(value, state.call.tool);
  const result = await runtime.store.complete(state.ref, holder, encoded, state.policy.retentionMs);
  const recorded = isRecorded(result, holder, encoded);
  runtime.emit(
    recorded ? 'tool.completed' : 'tool.stale_result',
    state,
    held.info,
    recorded ? { recorded } : {},
  );
}

/** A superseded attempt that still returns: try to record it; a stale one is reported. */
export function recordLate<T>(held: HeldClaim, bodyPromise: Promise<T>): void {
  const { runtime, state, holder, info } = held;
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
