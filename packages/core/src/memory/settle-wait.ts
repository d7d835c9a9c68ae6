// The MemoryStore's waiters: woken directly when a record settles (no polling) and by a timer at
// the holder's lease deadline, judged on the store's clock as claim judges it.
import type { RecordRef, WaitOptions, WaitResult } from '../store/idempotency-store.js';
import type { MemoryRecords } from './backend.js';
import type { Clock } from './options.js';
import { recordId } from './record-codec.js';

interface Waiter {
  readonly wake: (result: WaitResult) => void;
}

export class MemoryWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();

  constructor(
    private readonly records: MemoryRecords,
    private readonly clock: Clock,
  ) {}

  /** Wakes the waiters of `ref`'s record as settled (its id is made only when someone waits). */
  notifySettled(ref: RecordRef): void {
    if (this.waiters.size > 0) this.notify(recordId(ref), 'settled');
  }

  /** Wakes the waiters of the record `id` with `result`. */
  notify(id: string, result: WaitResult): void {
    const set = this.waiters.get(id);
    if (set === undefined) return;
    for (const waiter of [...set]) waiter.wake(result);
  }

  /** Wakes every waiter as settled (the store closes). */
  notifyAll(): void {
    for (const [id] of this.waiters) this.notify(id, 'settled');
  }

  /** See MemoryStore.waitForSettle (input checked, the store open). */
  wait(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    const id = recordId(ref);
    const now = this.clock.now();
    const record = this.records.live(ref, now);
    if (record === undefined || record.state !== 'in_progress') return Promise.resolve('settled');
    if (record.leaseExpiresAtMs <= now) return Promise.resolve('lease_expired');
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<WaitResult>((resolve, reject) => {
      this.register(ref, id, options, record.leaseExpiresAtMs, now, resolve, reject);
    });
  }

  private register(
    ref: RecordRef,
    id: string,
    options: WaitOptions,
    leaseExpiresAtMs: number,
    now: number,
    resolve: (result: WaitResult) => void,
    reject: (error: unknown) => void,
  ): void {
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
      const nowMs = this.clock.now();
      const current = this.records.live(ref, nowMs);
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
      const set = this.waiters.get(id);
      set?.delete(waiter);
      if (set?.size === 0) this.waiters.delete(id);
    };
    const finish = (result: WaitResult): void => {
      cleanup();
      resolve(result);
    };
    arm(leaseExpiresAtMs, now);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let set = this.waiters.get(id);
    if (set === undefined) {
      set = new Set();
      this.waiters.set(id, set);
    }
    set.add(waiter);
  }
}
