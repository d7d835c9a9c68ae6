import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { MAX_ID_LENGTH } from '../key/key-limits.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import type { ClaimOptions, ClaimResult, CompleteResult, RecordRef } from '../store/idempotency-store.js';
import { nameProblem } from '../store/store-input.js';
import {
  approvalDeniedError,
  approvalOf,
  approvalRequiredError,
  lostAfterApproval,
  requireApprovals,
} from './approval-errors.js';
import { type AcquiredClaim, runAttempt, type SentClaim } from './attempt.js';
import {
  asStoreError,
  executionAbandonedError,
  indeterminateOutcomeError,
  recordLost,
} from './call-errors.js';
import type { CallState } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';
import { type Answer, type Body, type CallProgress, NO_ATTEMPT, SUPERSEDED } from './guard-types.js';
import type { HeldClaim } from './held-claim.js';
import { markIndeterminate } from './mark-indeterminate.js';
import { completeWithRetry, isRecorded } from './outcome-recording.js';
import { previousRequest, rotatedLife } from './previous-secret.js';
import { describeError } from './recorded-error.js';
import { fitsBefore, stepDeadline, withinStep } from './step-budget.js';

/** Pause before asking the store again for a claim whose reply was lost. */
const CLAIM_RETRY_DELAY_MS = 25;

/** Sentinel: a call that ran its body before may run it again (IDEMPOTENT, below maxAttempts). */
const RUN_AGAIN = Symbol('run again');

type BusyClaim = Extract<ClaimResult, { status: 'busy' }>;
type SettledClaim = Exclude<ClaimResult, { status: 'acquired' | 'busy' }>;

/**
 * Claim the key and answer: run the body (`acquired`), wait for the holder and claim again
 * (`busy`), or answer what is recorded. Claims again, with a fresh owner, after an attempt was
 * superseded; rule G1 keeps a call that entered its body from entering it again.
 */
export async function claimLoop<T>(
  runtime: GuardRuntime,
  state: CallState,
  body: Body<T>,
  alreadyWaiting: boolean,
): Promise<Answer<T>> {
  const { call } = state;
  let waitingEmitted = alreadyWaiting;
  const progress: CallProgress = { executions: 0, ownResult: undefined, lastAttempt: undefined };
  if (state.policy.approval === 'required') requireApprovals(runtime);
  for (;;) {
    call.signal?.throwIfAborted();
    const owner = runtime.nextOwner();
    const options = claimOptionsOf(state, owner, runtime.codecName);
    let sent: SentClaim;
    const stepStartedAtMs = performance.now();
    try {
      // The first try awaited here, not in a helper: one async function fewer per call.
      const sentAtMs = stepStartedAtMs;
      sent = {
        claim: await (runtime.stepBudget.boundsFirstTry
          ? withinStep('claim', runtime.stepBudget, stepDeadline(runtime.stepBudget, sentAtMs), () =>
              runtime.store.claim(state.ref, options),
            )
          : runtime.store.claim(state.ref, options)),
        sentAtMs,
      };
    } catch (first) {
      try {
        sent = await claimAgain(
          runtime,
          state.ref,
          options,
          first,
          stepDeadline(runtime.stepBudget, stepStartedAtMs),
        );
      } catch (error) {
        return answerWhenUnreachable<T>(runtime, state, progress, error);
      }
    }
    const { claim } = sent;
    if (claim.status === 'acquired') {
      const holder = { fence: claim.fence, owner };
      const held: HeldClaim = {
        runtime,
        state,
        holder,
        info: { attempt: claim.attempt, fence: claim.fence },
      };
      if (progress.executions > 0) {
        // Rule G1 (docs/guarantee.md): this call already entered its body; a new life of the key
        // must not run it again on this call's behalf.
        const answer = await afterLostRecord<T>(held, claim, progress);
        if (answer !== RUN_AGAIN) return answer;
      } else if (
        (state.underPreviousSecret !== undefined ||
          // Under the previous key an approval consumed is the request asked there, not a fresh life.
          (state.underCurrentSecret !== undefined && claim.approval === undefined)) &&
        claim.fence === 1 &&
        claim.attempt === 1
      ) {
        // A key-secret rotation: the call may have a record under the other secret (checked only
        // here, so a guard without a rotation pays nothing).
        const elsewhere = await rotatedLife(held);
        if (elsewhere !== undefined) return claimLoop<T>(runtime, elsewhere, body, waitingEmitted);
      }
      if (call.signal?.aborted === true) {
        // Cancelled while the claim was in flight: the body never starts, so nothing is held.
        await runtime.releaseQuietly(state.ref, holder);
        throw call.signal.reason;
      }
      if (claim.approval !== undefined) {
        runtime.emit('tool.approval_consumed', state, held.info, { approval: approvalOf(claim.approval) });
      }
      // `sent.claim` is the acquired claim narrowed above (TypeScript does not narrow `sent` by it).
      const result = await runAttempt<T>(held, sent as SentClaim<AcquiredClaim>, body, progress);
      if (result !== SUPERSEDED) return result;
      continue;
    }
    if (claim.status === 'busy') {
      const remainingMs = waitBudget<T>(runtime, state, claim, progress);
      if (typeof remainingMs !== 'number') return remainingMs;
      if (!waitingEmitted) {
        waitingEmitted = true;
        runtime.emit('tool.waiting', state, claim.record);
      }
      await runtime.storeCall(
        'waitForSettle',
        () => runtime.store.waitForSettle(state.ref, { timeoutMs: remainingMs, signal: call.signal }),
        call.signal,
      );
      continue;
    }
    if (
      claim.status === 'approval_required' &&
      progress.executions === 0 &&
      state.underPreviousSecret !== undefined
    ) {
      // A key-secret rotation: the request may have been asked, decided or run under the previous key.
      const elsewhere = await previousRequest(runtime, state);
      if (elsewhere !== undefined) return claimLoop<T>(runtime, elsewhere, body, waitingEmitted);
    }
    if (progress.executions > 0 && (claim.status === 'approval_required' || claim.status === 'denied')) {
      // Rule G1: this call entered its body and its record was lost; the key's new life asks for
      // an approval, which must not stand for this call's unknown outcome.
      throw lostAfterApproval(runtime, state, progress);
    }
    return answerSettled<T>(runtime, state, claim);
  }
}

function claimOptionsOf(state: CallState, owner: string, codec: string): ClaimOptions {
  const { call, policy } = state;
  const options: { -readonly [K in keyof ClaimOptions]: ClaimOptions[K] } = {
    tool: call.tool,
    fingerprint: state.fingerprint,
    owner,
    leaseMs: policy.leaseMs,
    retentionMs: policy.retentionMs,
    mode: policy.kind === Idempotency.EFFECTFUL ? 'at-most-once' : 'at-least-once',
    maxAttempts: policy.maxAttempts,
    checkFingerprint: state.checkFingerprint,
  };
  // For operators only (toolfence list / inspect); never part of a decision. Absent ones stay
  // absent; an id no store takes (empty, too long) is left out rather than lose the call for it.
  // Assigned, not spread in (`...(ok ? { runId } : {})` took V8's slow path on every claim).
  if (isRecordableId(state.runId)) options.runId = state.runId;
  if (isRecordableId(call.callId)) options.callId = call.callId;
  if (state.description !== undefined) options.description = state.description;
  options.codec = codec;
  if (policy.approval === 'required') options.approval = 'required';
  return options;
}

function isRecordableId(id: string | undefined): id is string {
  return id !== undefined && nameProblem(id, MAX_ID_LENGTH) === undefined;
}

/**
 * The claim's first try failed with `first`. A claim whose reply was lost may have taken effect
 * in the store: asking once more with the SAME owner is answered `acquired` by the store if it
 * did, instead of leaving an orphan claim that would later read as a lost (indeterminate)
 * attempt. A refusal (a ToolfenceError other than StoreUnavailableError) is not resent.
 */
async function claimAgain(
  runtime: GuardRuntime,
  ref: RecordRef,
  options: ClaimOptions,
  first: unknown,
  deadline: number,
): Promise<SentClaim> {
  if (ToolfenceError.isInstance(first) && !StoreUnavailableError.isInstance(first)) throw first;
  // One budget per step (step-budget.ts): a first try that used it up (a frozen store) is the
  // step's answer; a quick failure (a dropped connection) is resent within what is left.
  if (!fitsBefore(deadline, CLAIM_RETRY_DELAY_MS)) throw asStoreError('claim', first);
  await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_DELAY_MS));
  // The lease a resent claim restarts is counted from when it was resent.
  const sentAtMs = performance.now();
  try {
    return {
      claim: await withinStep('claim', runtime.stepBudget, deadline, () => runtime.store.claim(ref, options)),
      sentAtMs,
    };
  } catch (error) {
    throw asStoreError('claim', error);
  }
}

/**
 * The key is held by another attempt. Returns how long this call may still wait (ms), or, for an
 * EFFECTFUL call whose own body returned a value (rule G1), that value. Throws
 * OutcomePendingError once `waitTimeoutMs` is spent.
 */
function waitBudget<T>(
  runtime: GuardRuntime,
  state: CallState,
  claim: BusyClaim,
  progress: CallProgress,
): number | Answer<T> {
  const { call, policy } = state;
  if (progress.ownResult !== undefined && policy.kind === Idempotency.EFFECTFUL) {
    // This call's effect happened and its value is known; whoever holds the key now is a
    // second execution that the lost record let in, and waiting for it adds nothing.
    return ownAnswer<T>(runtime, state, progress);
  }
  const waitedMs = performance.now() - state.waitStartedMs;
  const remainingMs = policy.waitTimeoutMs - waitedMs;
  if (remainingMs <= 0) {
    const pending = new OutcomePendingError({
      key: state.ref.key,
      tool: call.tool,
      waitedMs: Math.round(waitedMs),
    });
    runtime.emit('tool.pending', state, claim.record, { error: describeError(pending) });
    throw pending;
  }
  return remainingMs;
}

/**
 * The value this call's own body returned, unrecorded. Listeners hear it as every unrecorded
 * answer: `tool.completed` with `recorded: false`, under the attempt that produced the value.
 */
function ownAnswer<T>(runtime: GuardRuntime, state: CallState, progress: CallProgress): Answer<T> {
  const attempt = progress.lastAttempt ?? NO_ATTEMPT;
  runtime.emit('tool.completed', state, attempt, { recorded: false });
  return { value: progress.ownResult?.value as T, encoded: undefined, ...attempt };
}

/**
 * The store could not be asked who holds the key. After this call's body ran, its own value is
 * the answer when it has one, and an EFFECTFUL call without one has an unknown outcome (never
 * "store unavailable, body not run"). Otherwise the store's error is rethrown as it is.
 */
function answerWhenUnreachable<T>(
  runtime: GuardRuntime,
  state: CallState,
  progress: CallProgress,
  error: unknown,
): never | Answer<T> {
  if (progress.executions === 0 || !StoreUnavailableError.isInstance(error)) throw error;
  if (progress.ownResult !== undefined) return ownAnswer<T>(runtime, state, progress);
  if (state.policy.kind !== Idempotency.EFFECTFUL) throw error;
  const reason = describeError(error);
  const attempt = progress.lastAttempt ?? NO_ATTEMPT;
  // Listeners hear every indeterminate answer, also this one (the record could not be read).
  runtime.emit('tool.indeterminate', state, attempt, { error: reason });
  throw indeterminateOutcomeError(state, attempt, reason, { cause: error });
}

/**
 * Rule G1: a claim `acquired` by a call that already entered its body is a new life of the key
 * (the record was released, forgotten, expired or lost by the store). The body is not run
 * again for EFFECTFUL; a known value is recorded in the new life; IDEMPOTENT may run again only
 * while this call's own executions stay below `maxAttempts`.
 */
async function afterLostRecord<T>(
  held: HeldClaim,
  claim: AcquiredClaim,
  progress: CallProgress,
): Promise<Answer<T> | typeof RUN_AGAIN> {
  const { runtime, state, holder, info: attemptInfo } = held;
  const { ref, policy } = state;
  const own = progress.ownResult;
  if (own !== undefined) {
    let result: CompleteResult | undefined;
    try {
      result = await completeWithRetry(held, own.encoded);
    } catch {
      result = undefined;
    }
    const recorded = result !== undefined && isRecorded(result, holder, own.encoded);
    runtime.emit('tool.completed', state, attemptInfo, { recorded });
    return { value: own.value as T, encoded: recorded ? own.encoded : undefined, ...attemptInfo };
  }
  if (policy.kind === Idempotency.EFFECTFUL) {
    throw await markIndeterminate(held, recordLost(), 0);
  }
  if (progress.executions >= policy.maxAttempts) {
    await runtime.releaseQuietly(ref, holder);
    const error = executionAbandonedError(state, { attempt: progress.executions, fence: claim.fence });
    runtime.emit('tool.abandoned', state, attemptInfo, { error: describeError(recordLost()) });
    throw error;
  }
  return RUN_AGAIN;
}

/** Answer a claim that found the record settled (or in conflict). */
function answerSettled<T>(runtime: GuardRuntime, state: CallState, claim: SettledClaim): Answer<T> {
  const { record } = claim;
  const { key } = state.ref;
  const tool = state.call.tool;
  switch (claim.status) {
    case 'completed': {
      const encoded = record.outcome ?? '';
      const value = runtime.decodeOutcome(encoded, tool) as T;
      // Both fingerprints cover every argument (neither is the key standing in): a repeat whose
      // non-key arguments differ is told so (the outcome is the key's, as documented).
      const argumentsDiffer =
        state.fingerprint !== key && record.fingerprint !== key && record.fingerprint !== state.fingerprint;
      runtime.emit('tool.deduplicated', state, record, argumentsDiffer ? { argumentsDiffer } : undefined);
      return { value, encoded, attempt: record.attempt, fence: record.fence };
    }
    case 'conflict':
      throw new IdempotencyConflictError(key, tool, record.tool);
    case 'indeterminate': {
      const error = record.error ?? { type: 'Unknown', message: 'no reason recorded' };
      runtime.emit('tool.indeterminate', state, record, { error });
      throw indeterminateOutcomeError(state, record, error);
    }
    case 'abandoned':
      runtime.emit('tool.abandoned', state, record, { error: record.error });
      throw executionAbandonedError(state, record);
    case 'approval_required':
      runtime.emit('tool.approval_required', state, record);
      throw approvalRequiredError(state);
    case 'denied':
      runtime.emit(
        'tool.denied',
        state,
        record,
        record.approval && { approval: approvalOf(record.approval) },
      );
      throw approvalDeniedError(state);
  }
}
