// SQLiteStore.waitForSettle: one waiter, woken directly by a settle in this process and by the
// change signal (settle-signal.ts) for other processes, re-reading at the lease deadline as the
// store's clock counts it.
import type { RecordRef, WaitOptions, WaitResult } from '@toolfence/core/store';
import { MAX_TIMER_MS } from '@toolfence/core/store';
import { OneShotWait } from '../shared/one-shot-wait.js';
import type { Connection, RecordsDatabase } from './backend.js';
import { toStoreError } from './errors.js';
import { recordId } from './record-codec.js';
import type { SettleWaiter } from './settle-signal.js';

class SettleWait extends OneShotWait {
  private checking = false;
  private recheck = false;
  private leaseTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private removeLocal: () => void = () => undefined;
  private removeSignal: () => void = () => undefined;
  private removeOnClose: () => void = () => undefined;
  private readonly onAbort = (): void => this.fail(this.options.signal?.reason);

  constructor(
    private readonly db: RecordsDatabase,
    private readonly ref: RecordRef,
    private readonly options: WaitOptions,
    private readonly reject: (error: unknown) => void,
    resolve: (result: WaitResult) => void,
  ) {
    super(resolve, reject);
  }

  start(connection: Connection): void {
    const waiter: SettleWaiter = {
      tenant: this.ref.tenant,
      settled: () => this.finish('settled'),
      changed: () => this.check(),
    };
    // Registered before the first read, so neither a settle here nor one elsewhere is missed.
    this.removeLocal = connection.local.add(recordId(this.ref), waiter);
    try {
      this.removeSignal = connection.signal.add(waiter);
    } catch (error) {
      this.removeLocal();
      this.reject(toStoreError('waitForSettle', error, this.db.site));
      return;
    }
    this.removeOnClose = this.db.onClose(() => this.finish('settled'));
    this.timeoutTimer = setTimeout(
      () => this.finish('timeout'),
      Math.min(this.options.timeoutMs, MAX_TIMER_MS),
    );
    this.options.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.check();
  }

  protected cleanup(): void {
    clearTimeout(this.leaseTimer);
    clearTimeout(this.timeoutTimer);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.removeLocal();
    this.removeSignal();
    this.removeOnClose();
  }

  private check(): void {
    if (this.finished) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = true;
    clearTimeout(this.leaseTimer);
    const { db, ref } = this;
    void db
      .withLock('waitForSettle', () => {
        const now = db.now();
        return { now, row: db.liveRow(ref, now) };
      })
      .then(
        ({ now, row }) => {
          if (row === undefined || row.state !== 'in_progress') return this.finish('settled');
          // Judged exactly as claim judges it: busy while lease_expires_at_ms > now.
          if (row.lease_expires_at_ms <= now) return this.finish('lease_expired');
          if (!this.finished) {
            const delayMs = Math.min(row.lease_expires_at_ms - now, MAX_TIMER_MS);
            this.leaseTimer = setTimeout(() => this.check(), delayMs);
          }
        },
        (error: unknown) => (db.closed ? this.finish('settled') : this.fail(error)),
      )
      .finally(() => {
        this.checking = false;
        if (this.recheck && !this.finished) {
          this.recheck = false;
          this.check();
        }
      });
  }
}

/** See SQLiteStore.waitForSettle (the connection is open and the input checked). */
export function waitForSettle(
  db: RecordsDatabase,
  connection: Connection,
  ref: RecordRef,
  options: WaitOptions,
): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve, reject) => {
    new SettleWait(db, ref, options, reject, resolve).start(connection);
  });
}
