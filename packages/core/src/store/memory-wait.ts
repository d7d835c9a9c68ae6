// MemoryStore's waitForSettle: woken directly when the record settles, and by a timer at the
// holder's lease deadline (judged by the store's clock) or at the wait's own timeout.
import type { IdempotencyRecord, WaitOptions, WaitResult } from './idempotency-store.js';

/** One waiter of a record. */
export interface Waiter {
  readonly wake: (result: WaitResult) => void;
}

/** What a wait needs of the store. */
export interface WaitScope {
  readonly clock: { now(): number };
  readonly waiters: Map<string, Set<Waiter>>;
  /** The record, if live at `nowMs`. */
  live(nowMs: number): IdempotencyRecord | undefined;
}

/** Wait for record `id`, known to be in progress with a lease live at `now`. */
export function waitOnRecord(
  scope: WaitScope,
  id: string,
  leaseExpiresAtMs: number,
  now: number,
  options: WaitOptions,
): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve, reject) => {
    // The wait's own timeout is a worker-side duration (monotonic); the lease is judged by the
    // store's clock, exactly as claim judges it.
    const timeoutAtMs = performance.now() + options.timeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (deadlineMs: number, nowMs: number): void => {
      const untilLeaseMs = deadlineMs - nowMs;
      const untilTimeoutMs = timeoutAtMs - performance.now();
      timer = setTimeout(onTimer, Math.max(1, Math.ceil(Math.min(untilLeaseMs, untilTimeoutMs))));
    };
    // A Node timer may fire a little before the clock reaches the deadline it was armed for:
    // decide on the clock, as claim does, and re-arm when the lease is still live (rule S6).
    const onTimer = (): void => {
      const nowMs = scope.clock.now();
      const current = scope.live(nowMs);
      if (current === undefined || current.state !== 'in_progress') finish('settled');
      else if (current.leaseExpiresAtMs <= nowMs) finish('lease_expired');
      else if (performance.now() >= timeoutAtMs) finish('timeout');
      else arm(current.leaseExpiresAtMs, nowMs);
    };
    const onAbort = (): void => {
      cleanup();
      reject(options.signal?.reason);
    };
    const waiter: Waiter = { wake: (result) => finish(result) };
    const cleanup = (): void => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      const set = scope.waiters.get(id);
      set?.delete(waiter);
      if (set?.size === 0) scope.waiters.delete(id);
    };
    const finish = (result: WaitResult): void => {
      cleanup();
      resolve(result);
    };
    arm(leaseExpiresAtMs, now);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let set = scope.waiters.get(id);
    if (set === undefined) {
      set = new Set();
      scope.waiters.set(id, set);
    }
    set.add(waiter);
  });
}
