// PostgresStore.waitForSettle: one waiter, woken by the store's LISTEN connection
// (settle-signal.ts), re-reading its record (statements/read-lease.sql) at the lease deadline as the
// database clock counts it, and polling while LISTEN is unavailable.
import { createHash } from 'node:crypto';
import type { RecordRef, WaitOptions, WaitResult } from '@toolfence/core/store';
import { StoreUnavailableError } from '@toolfence/core/store';
import { OneShotWait } from '../shared/one-shot-wait.js';
import type { StatementRunner } from './backend.js';
import type { SettleListener, SettleWaiter } from './settle-signal.js';

const maxPollIntervalMs = 2_000;
/** Longest a waiter waits for LISTEN to be set up before it reads anyway (and polls). */
const listenWaitMs = 2_000;

/** What a wait works with (the store's parts and settings). */
export interface SettleWaitContext {
  readonly runner: StatementRunner;
  readonly listener: SettleListener;
  readonly store: string;
  readonly pollIntervalMs: number;
  readonly safetyPollMs: number;
  readonly operationTimeoutMs: number;
}

/** Same digest the NOTIFY trigger sends: SHA-256 of UTF-8 tenant, a NUL byte, UTF-8 key. */
function recordDigest(ref: RecordRef): string {
  return createHash('sha256')
    .update(Buffer.from(ref.tenant, 'utf8'))
    .update(Buffer.from([0]))
    .update(Buffer.from(ref.key, 'utf8'))
    .digest('hex');
}

class SettleWait extends OneShotWait {
  private started = false;
  private firstReadDone = false;
  private timedOut = false;
  private checking = false;
  private recheck = false;
  private leaseDueAtMs = Number.POSITIVE_INFINITY;
  private pollMs: number;
  private checkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private hardStop: NodeJS.Timeout | undefined;
  private remove: () => void = () => undefined;
  private readonly onAbort = (): void => this.fail(this.options.signal?.reason);

  constructor(
    private readonly context: SettleWaitContext,
    private readonly ref: RecordRef,
    private readonly options: WaitOptions,
    resolve: (result: WaitResult) => void,
    reject: (error: unknown) => void,
  ) {
    super(resolve, reject);
    this.pollMs = context.pollIntervalMs;
  }

  start(): void {
    const { context, options } = this;
    this.remove = context.listener.add(recordDigest(this.ref), this.waiter());
    // The first read decides even when the timeout is shorter than its round trip (a settled
    // record answers 'settled'); it is bounded by operationTimeoutMs, and so is the whole wait:
    // never longer than timeoutMs + operationTimeoutMs (rule S5).
    this.timeoutTimer = setTimeout(() => {
      if (this.firstReadDone) this.finish('timeout');
      else this.timedOut = true;
    }, options.timeoutMs);
    this.hardStop = setTimeout(
      () =>
        this.fail(
          new StoreUnavailableError(
            'waitForSettle',
            `${context.store}: no answer within timeoutMs (${options.timeoutMs} ms) + operationTimeoutMs (${context.operationTimeoutMs} ms)`,
          ),
        ),
      options.timeoutMs + context.operationTimeoutMs,
    );
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    // LISTEN first, then read: a settle committed after the read is then always notified. If
    // opening the connection hangs (no connect timeout on the pool), read and poll meanwhile.
    let listenWait: NodeJS.Timeout | undefined;
    void Promise.race([
      context.listener.ensureListening(),
      new Promise<void>((resolveWait) => {
        listenWait = setTimeout(resolveWait, Math.min(listenWaitMs, context.operationTimeoutMs));
      }),
    ]).then(() => {
      clearTimeout(listenWait);
      void this.check();
    });
  }

  private waiter(): SettleWaiter {
    return {
      notified: () => this.finish('settled'),
      restored: () => {
        if (this.started) void this.check();
      },
      lost: () => {
        this.pollMs = this.context.pollIntervalMs;
        this.schedule();
      },
      closed: () => this.finish('settled'),
    };
  }

  protected cleanup(): void {
    clearTimeout(this.checkTimer);
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.hardStop);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.remove();
  }

  private schedule(): void {
    if (this.finished) return;
    clearTimeout(this.checkTimer);
    let periodMs: number;
    if (this.context.listener.listening) {
      periodMs = this.context.safetyPollMs;
    } else {
      periodMs = this.pollMs;
      this.pollMs = Math.min(this.pollMs * 2, maxPollIntervalMs);
    }
    // +1: the lease is judged on the database clock; be just past it when re-reading (and a
    // read that still finds it live re-arms: the database decides, not this timer).
    const delayMs = Math.max(0, Math.min(periodMs, this.leaseDueAtMs - performance.now() + 1));
    this.checkTimer = setTimeout(() => void this.check(), delayMs);
  }

  private async check(): Promise<void> {
    if (this.finished) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.started = true;
    this.checking = true;
    clearTimeout(this.checkTimer);
    try {
      await this.read();
    } catch (error) {
      this.fail(error);
    } finally {
      this.checking = false;
      if (this.recheck && !this.finished) {
        this.recheck = false;
        void this.check();
      }
    }
  }

  private async read(): Promise<void> {
    const { runner } = this.context;
    const row = await runner.queryOne('waitForSettle', runner.sql.readLease, [this.ref.tenant, this.ref.key]);
    this.firstReadDone = true;
    if (row === undefined || row.state !== 'in_progress') return this.finish('settled');
    // Judged in SQL exactly as claim judges the lease (rule S6), not from rounded ms.
    if (row.lease_expired === true) return this.finish('lease_expired');
    if (this.timedOut) return this.finish('timeout');
    const remainingMs = Math.max(1, Number(row.lease_remaining_ms));
    this.leaseDueAtMs = performance.now() + remainingMs;
    // The record changed under the read (see read-lease.sql): read again now, or a settle
    // that is not notified would only be seen by the safety poll.
    if (row.notified === false) this.recheck = true;
    else this.schedule();
  }
}

/** See PostgresStore.waitForSettle. */
export function waitForSettle(
  context: SettleWaitContext,
  ref: RecordRef,
  options: WaitOptions,
): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve, reject) => {
    new SettleWait(context, ref, options, resolve, reject).start();
  });
}
