import type { LeaseLostError } from '../errors/lease-lost-error.js';
import { ToolTimeoutError } from '../errors/tool-timeout-error.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import type { ClaimResult } from '../store/idempotency-store.js';
import { runWithToolCall, type ToolCallContext } from './call-context.js';
import { leaseLostError, safeNoEffect } from './call-errors.js';
import { type Answer, type Body, type CallProgress, SUPERSEDED } from './guard-types.js';
import type { HeldClaim } from './held-claim.js';
import { answerInterruption, type Interruption, recordLate } from './late-settlement.js';
import { BodyContext, LazyAborter } from './lazy-aborter.js';
import { confirmLease, leaseViewLive } from './lease-confirmation.js';
import { LeaseKeeper, type LeaseLossListener, type LeaseLossReason } from './lease-keeper.js';
import { markIndeterminate } from './mark-indeterminate.js';
import { recordOutcome } from './outcome-recording.js';
import { describeError } from './recorded-error.js';

/** A claim the store answered `acquired`. */
export type AcquiredClaim = Extract<ClaimResult, { status: 'acquired' }>;

/** A claim's answer and when (monotonic ms) the request that got it was sent. */
export interface SentClaim<C extends ClaimResult = ClaimResult> {
  readonly claim: C;
  readonly sentAtMs: number;
}

/**
 * Why the caller is answered before the body settled: `'interrupted'`, a timeout or the caller's
 * own abort (rule G4); `'lease'`, a lost lease whose grace of `waitTimeoutMs` ran out.
 */
type InterruptReason = 'interrupted' | 'lease';

/** How the body settled, or why its caller was answered first. */
type Settlement<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown }
  | { readonly interrupted: InterruptReason };

/**
 * Run the body once as the holder of an acquired claim, and settle the claim by how it ended:
 * a value is recorded; an error releases the claim (IDEMPOTENT, or a no-effect error) or marks
 * it indeterminate (EFFECTFUL). SUPERSEDED when the lease was lost (rule G1: the caller then
 * only reads the answer) or the claim was lost before the body started (rule G2).
 */
export async function runAttempt<T>(
  held: HeldClaim,
  sent: SentClaim<AcquiredClaim>,
  body: Body<T>,
  progress: CallProgress,
): Promise<Answer<T> | typeof SUPERSEDED> {
  const { runtime, state, holder } = held;
  const { sentAtMs } = sent;
  // Rule G2's common case (the reply came while the lease view is live) needs no async step.
  // One clock read serves the check, the attempt's start and its keeper (they are one step).
  let nowMs = performance.now();
  let leaseFromMs: number | typeof SUPERSEDED = sentAtMs;
  if (!leaseViewLive(state, sentAtMs, nowMs)) {
    leaseFromMs = await confirmLease(held, sentAtMs);
    nowMs = performance.now();
  }
  if (leaseFromMs === SUPERSEDED) return SUPERSEDED;
  const attempt = new Attempt<T>(held, sent.claim.takeover, nowMs);
  let bodyPromise: Promise<T>;
  try {
    bodyPromise = attempt.start(body, leaseFromMs, progress);
  } catch (error) {
    // Failed before the body could start: never leave the claim behind.
    attempt.stop();
    await runtime.store.release(state.ref, holder).catch(() => undefined);
    throw error;
  }
  const settlement = await attempt.race(bodyPromise);
  attempt.raceOver(settlement);
  const durationMs = Math.round(performance.now() - attempt.startedMs);
  // The lease is kept (renewed) until the outcome is recorded or the claim given up: a slow
  // store must not let another worker take over a call that already ran.
  let keepLease = false;
  try {
    if ('interrupted' in settlement) {
      keepLease = settlement.interrupted === 'interrupted';
      return attempt.answerInterrupted(settlement.interrupted, bodyPromise, durationMs);
    }
    if (settlement.ok) {
      return await recordOutcome(held, settlement.value, durationMs, progress);
    }
    const { error } = settlement;
    if (attempt.leaseLost !== undefined && error === attempt.leaseLost) {
      // The body honoured the lost lease: the current holder's answer is this caller's answer.
      return SUPERSEDED;
    }
    if (state.policy.kind === Idempotency.IDEMPOTENT || safeNoEffect(state.policy, error)) {
      runtime.emit('tool.failed', state, held.info, { error: runtime.recordError(error), durationMs });
      const released = await runtime.releaseQuietly(state.ref, holder);
      // IDEMPOTENT whose claim was taken over: the current holder's answer is this caller's answer.
      // A no-effect EFFECTFUL error is the answer whatever became of the claim (nothing happened).
      if (!released && attempt.leaseLost !== undefined && state.policy.kind === Idempotency.IDEMPOTENT) {
        return SUPERSEDED;
      }
      throw error;
    }
    throw await markIndeterminate(held, error, durationMs);
  } finally {
    if (!keepLease) attempt.keeper.stop();
  }
}

/**
 * One attempt's body and what watches it: the lease keeper, the timeout and the caller's abort.
 * Interruptions the caller is answered at once for: a timeout and the caller's own abort (rule
 * G4); a lost lease after a grace of `waitTimeoutMs` for the body to notice its signal.
 */
class Attempt<T> implements LeaseLossListener {
  /** When the body was started (monotonic ms). */
  readonly startedMs: number;
  /** Renews the lease from when the body starts (`start`) until the claim is settled. */
  keeper!: LeaseKeeper;
  /** Set when the lease is lost while the body runs. */
  leaseLost: LeaseLostError | undefined;
  /** Once the body settled, the store's answer to complete/release decides what happened. */
  private bodySettled = false;
  private interruption: Interruption | undefined;
  /** The body's signal, made only when the body reads it. */
  private readonly aborter: LazyAborter;
  /** Settles the race (set by `race`); the first settlement wins. */
  private settleRace: ((settlement: Settlement<T>) => void) | undefined;
  /** An interruption that came before `race` was called: it wins the race. */
  private earlyInterrupt: InterruptReason | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private onCallerAbort: (() => void) | undefined;

  constructor(
    private readonly held: HeldClaim,
    /** The claim took over from a holder whose lease expired. */
    private readonly takeover: boolean,
    /** Now (monotonic ms): the body is started in this synchronous step. */
    startedMs: number,
  ) {
    this.aborter = new LazyAborter(held.state.call.signal);
    this.startedMs = startedMs;
  }

  /** Start the lease keeper, the timeout and the abort watch, then the body. */
  start(body: Body<T>, leaseFromMs: number, progress: CallProgress): Promise<T> {
    const { runtime, state, holder, info } = this.held;
    const { call, policy, ref } = state;
    this.keeper = new LeaseKeeper({
      store: runtime.store,
      ref,
      holder,
      leaseMs: policy.leaseMs,
      heartbeatMs: policy.heartbeatMs,
      leaseFromMs,
      nowMs: this.startedMs,
      listener: this,
    });
    const timeoutMs = policy.timeoutMs;
    if (timeoutMs !== undefined) this.timeoutTimer = setTimeout(() => this.timeOut(timeoutMs), timeoutMs);
    const callerSignal = call.signal;
    if (callerSignal !== undefined) {
      this.onCallerAbort = () => {
        this.interruption ??= { kind: 'abort', error: callerSignal.reason };
        this.interrupt('interrupted');
      };
      callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
    const context = this.context();
    runtime.emit('tool.started', state, info, { takeover: this.takeover });
    progress.executions++;
    progress.lastAttempt = info;
    return Promise.resolve().then(() => runWithToolCall(context, () => body(context)));
  }

  /**
   * The body's settlement, or an interruption if one comes first. One promise settled by
   * whichever comes first (not `Promise.race` over two derived promises: four fewer promises per
   * call); an interruption takes one microtask to land, as the body's settlement does, so the
   * order between the two is the one `Promise.race` gave.
   */
  race(bodyPromise: Promise<T>): Promise<Settlement<T>> {
    return new Promise<Settlement<T>>((resolve) => {
      if (this.earlyInterrupt !== undefined) resolve({ interrupted: this.earlyInterrupt });
      this.settleRace = resolve;
      bodyPromise.then(
        (value) => resolve({ ok: true, value }),
        (error: unknown) => resolve({ ok: false, error }),
      );
    });
  }

  /** Interrupt the race (or, before it started, decide it); the first settlement wins. */
  private interrupt(reason: InterruptReason): void {
    if (this.settleRace === undefined) {
      this.earlyInterrupt ??= reason;
      return;
    }
    const settle = this.settleRace;
    queueMicrotask(() => settle({ interrupted: reason }));
  }

  /** The race is over: stop watching; unless interrupted, a lost lease changes nothing now. */
  raceOver(settlement: Settlement<T>): void {
    this.stopWatching();
    this.bodySettled = !('interrupted' in settlement) || settlement.interrupted === 'lease';
  }

  /** Answer the caller of an interrupted body: SUPERSEDED after a lost lease, else throws. */
  answerInterrupted(reason: InterruptReason, bodyPromise: Promise<T>, durationMs: number): typeof SUPERSEDED {
    if (reason === 'lease') {
      // The body ignored its signal past the grace period: record late if it ever returns,
      // and answer this caller with the current holder's outcome.
      recordLate(this.held, bodyPromise);
      return SUPERSEDED;
    }
    const running = { held: this.held, body: bodyPromise, stopLease: () => this.keeper.stop() };
    throw answerInterruption(running, this.interruption, durationMs);
  }

  /** Stop everything: the body never started (the keeper may not exist yet). */
  stop(): void {
    (this.keeper as LeaseKeeper | undefined)?.stop();
    this.stopWatching();
  }

  private stopWatching(): void {
    clearTimeout(this.timeoutTimer);
    if (this.onCallerAbort !== undefined) {
      this.held.state.call.signal?.removeEventListener('abort', this.onCallerAbort);
    }
  }

  private context(): ToolCallContext {
    const { state, info } = this.held;
    return new BodyContext(state.ref, info, this.aborter, state.runId, state.call);
  }

  /** The keeper's news (LeaseLossListener): the lease is lost. */
  onLeaseLost(reason: LeaseLossReason): void {
    if (this.bodySettled) return;
    const { runtime, state, holder, info } = this.held;
    const leaseLost = leaseLostError(state.ref.key, state.call.tool, holder.fence, reason);
    this.leaseLost = leaseLost;
    state.flight?.release();
    runtime.emit('tool.fenced', state, info, { error: describeError(leaseLost) });
    this.aborter.abort(leaseLost);
    const grace = setTimeout(() => this.interrupt('lease'), state.policy.waitTimeoutMs);
    grace.unref();
  }

  private timeOut(timeoutMs: number): void {
    const error = new ToolTimeoutError(this.held.state.call.tool, timeoutMs);
    this.interruption ??= { kind: 'timeout', error };
    this.aborter.abort(error);
    this.interrupt('interrupted');
  }
}
