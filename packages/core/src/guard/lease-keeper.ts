import type { Holder, IdempotencyStore, RecordRef } from '../store/idempotency-store.js';

export type LeaseLossReason =
  /** The store said the holder is no longer current (taken over, settled or gone). */
  | { readonly kind: 'lost'; readonly detail: 'stale' | 'settled' | 'not_found' }
  /** Renewals failed or hung (store unreachable) until the lease ran out by this worker's clock. */
  | { readonly kind: 'expired'; readonly error: unknown };

/** What a {@link LeaseKeeper} renews, how often, and whom it tells when the lease is lost. */
export interface LeaseKeeperOptions {
  readonly store: IdempotencyStore;
  readonly ref: RecordRef;
  readonly holder: Holder;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  /** When the lease view starts (monotonic ms): when the claim, or the renewal that confirmed it, was sent. */
  readonly leaseFromMs: number;
  /** Now (monotonic ms), as the caller just read it: the keeper starts in the same step. */
  readonly nowMs: number;
  /** Told once when the lease is lost (a method, not a closure: nothing made per keeper). */
  readonly listener: LeaseLossListener;
}

/** Whom a {@link LeaseKeeper} tells that the lease is lost. */
export interface LeaseLossListener {
  onLeaseLost(reason: LeaseLossReason): void;
}

/**
 * Renews one holder's lease every `heartbeatMs` until stopped, off the call's critical path. A
 * renewal the store refuses, or a lease that runs out while the store cannot be reached, calls
 * the listener's `onLeaseLost` once and stops.
 *
 * A watchdog fires at the local estimate of the lease deadline, counted from when the last
 * successful renewal (or the claim) was SENT (armed only while a renewal is outstanding), so the worker believes its lease ends no later
 * than the store does (clock rates assumed equal; offsets do not matter).
 */
export class LeaseKeeper {
  private beatTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError: unknown;
  /** Local estimate of the lease deadline (monotonic ms, `performance.now()`: a wall-clock step cannot move it). */
  private deadlineMs: number;

  private readonly store: IdempotencyStore;
  private readonly ref: RecordRef;
  private readonly holder: Holder;
  private readonly leaseMs: number;
  private readonly heartbeatMs: number;
  private readonly listener: LeaseLossListener;

  constructor(options: LeaseKeeperOptions) {
    const { leaseMs, heartbeatMs } = options;
    this.store = options.store;
    this.ref = options.ref;
    this.holder = options.holder;
    this.leaseMs = leaseMs;
    this.heartbeatMs = heartbeatMs;
    this.listener = options.listener;
    this.deadlineMs = options.leaseFromMs + leaseMs;
    // One timer while all is well: the watchdog is armed only while a renewal is outstanding or
    // failing. The first beat keeps the usual slack before the deadline (leaseMs - heartbeatMs):
    // a claim whose reply came late has less lease left, so it renews sooner (at once when less
    // than that slack is left), and the beat always comes before the deadline.
    const leftMs = this.deadlineMs - options.nowMs;
    this.scheduleBeat(Math.min(heartbeatMs, leftMs - (leaseMs - heartbeatMs)));
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.beatTimer);
    clearTimeout(this.watchdog);
  }

  private armWatchdog(): void {
    if (this.watchdog !== undefined || this.stopped) return;
    this.watchdog = setTimeout(
      () => this.lose({ kind: 'expired', error: this.lastError }),
      Math.max(0, this.deadlineMs - performance.now()),
    );
    // Lease timers alone must not keep the process alive; the body's own work does.
    this.watchdog.unref();
  }

  private disarmWatchdog(): void {
    clearTimeout(this.watchdog);
    this.watchdog = undefined;
  }

  private scheduleBeat(delayMs: number): void {
    if (this.stopped) return;
    this.beatTimer = setTimeout(() => void this.beat(), Math.max(0, delayMs));
    this.beatTimer.unref();
  }

  private async beat(): Promise<void> {
    const sentAtMs = performance.now();
    this.armWatchdog();
    try {
      const result = await this.store.renew(this.ref, this.holder, this.leaseMs);
      if (this.stopped) return;
      if (result.status === 'renewed') {
        this.deadlineMs = sentAtMs + this.leaseMs;
        this.disarmWatchdog();
        this.scheduleBeat(this.heartbeatMs - (performance.now() - sentAtMs));
      } else {
        this.lose({ kind: 'lost', detail: result.reason });
      }
    } catch (error) {
      if (this.stopped) return;
      this.lastError = error;
      // Retry sooner than the heartbeat; the watchdog (still armed) ends it if the lease runs out.
      this.scheduleBeat(this.heartbeatMs / 4);
    }
  }

  private lose(reason: LeaseLossReason): void {
    if (this.stopped) return;
    this.stop();
    this.listener.onLeaseLost(reason);
  }
}
