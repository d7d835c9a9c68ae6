// RedisStore.waitForSettle: one waiter, woken by the PUBLISH of the script that settles its
// record (through the store's one subscriber connection, settle-signal.ts), re-reading the
// record as a fallback and at the lease deadline as the Redis clock counts it.
import type { WaitOptions, WaitResult } from '@toolfence/core/store';
import { StoreUnavailableError } from '@toolfence/core/store';
import { OneShotWait } from '../shared/one-shot-wait.js';
import type { RedisExchange } from './backend.js';
import type { RecordRead } from './record-codec.js';
import type { SettleSubscriber } from './settle-signal.js';

/** First re-check of a waited record when no message came; doubles up to the maximum. */
const FIRST_POLL_MS = 250;
const MAX_POLL_MS = 2000;

/** What a wait works with (the store's parts and settings). */
export interface SettleWaitContext {
  readonly exchange: RedisExchange;
  readonly subscriber: SettleSubscriber;
  readonly operationTimeoutMs: number;
  /** Pending waits, failed when the store closes. */
  readonly waits: Set<(error: Error) => void>;
  /** Reads the waited record with the Redis clock, marking it as waited on (watch-1.lua). */
  readonly read: () => Promise<RecordRead>;
}

class SettleWait extends OneShotWait {
  private firstReadDone = false;
  private timedOut = false;
  private pollMs = FIRST_POLL_MS;
  private checkTimer: NodeJS.Timeout | undefined;
  private timeoutTimer: NodeJS.Timeout | undefined;
  private hardStop: NodeJS.Timeout | undefined;
  private readonly listening: { remove(): void; subscribed: Promise<void> };
  /** This wait's entry among the store's pending waits (failed when the store closes). */
  private readonly failWait = (error: Error): void => this.fail(error);
  private readonly onAbort = (): void => this.fail(this.options.signal?.reason);

  constructor(
    private readonly context: SettleWaitContext,
    channel: string,
    private readonly options: WaitOptions,
    resolve: (result: WaitResult) => void,
    reject: (error: unknown) => void,
  ) {
    super(resolve, reject);
    this.listening = context.subscriber.listen(channel, () => this.finish('settled'));
  }

  start(): void {
    const { context, options } = this;
    context.waits.add(this.failWait);
    options.signal?.addEventListener('abort', this.onAbort, { once: true });
    // The first read decides even when the timeout is shorter than its round trip: a record
    // that is already settled answers 'settled', as the contract asks.
    this.timeoutTimer = setTimeout(
      () => {
        if (this.firstReadDone) this.finish('timeout');
        else this.timedOut = true;
      },
      Math.max(0, options.timeoutMs),
    );
    // Every exchange is bounded by operationTimeoutMs; this bounds the whole wait (rule S5), so
    // no sequence of slow exchanges can hold a waiter past timeoutMs + operationTimeoutMs.
    this.hardStop = setTimeout(
      () =>
        this.fail(
          new StoreUnavailableError(
            'waitForSettle',
            `${context.exchange.site}: no answer within timeoutMs (${options.timeoutMs} ms) + operationTimeoutMs (${context.operationTimeoutMs} ms)`,
          ),
        ),
      Math.max(0, options.timeoutMs) + context.operationTimeoutMs,
    );
    this.subscribeThenRead();
  }

  /** Subscribed BEFORE the first read: a settlement in between is then a message, not lost. */
  private subscribeThenRead(): void {
    const { exchange, subscriber } = this.context;
    const subscriberConnection = subscriber.connection;
    exchange
      .run('waitForSettle', subscriberConnection, () => this.listening.subscribed)
      .then(
        () => {
          if (!this.finished) void this.check();
        },
        (error: Error) => {
          // A subscriber that did not acknowledge within the deadline is stalled: never reuse it.
          if (exchange.isDeadlineError(error)) subscriber.discard(subscriberConnection);
          this.fail(error);
        },
      );
  }

  protected cleanup(): void {
    clearTimeout(this.checkTimer);
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.hardStop);
    this.options.signal?.removeEventListener('abort', this.onAbort);
    this.listening.remove();
    this.context.waits.delete(this.failWait);
  }

  private async check(): Promise<void> {
    let read: RecordRead;
    try {
      read = await this.context.read();
    } catch (error) {
      this.fail(error);
      return;
    }
    if (this.finished) return;
    this.firstReadDone = true;
    const { record, nowMs } = read;
    if (record === null || record.state !== 'in_progress') return this.finish('settled');
    const leaseRemainingMs = record.leaseExpiresAtMs - nowMs;
    if (leaseRemainingMs <= 0) return this.finish('lease_expired');
    if (this.timedOut) return this.finish('timeout');
    // +1: wake just after the deadline, not a hair before it.
    this.checkTimer = setTimeout(() => void this.check(), Math.min(leaseRemainingMs + 1, this.pollMs));
    this.pollMs = Math.min(this.pollMs * 2, MAX_POLL_MS);
  }
}

/** See RedisStore.waitForSettle (input checked, the store open and its client connected). */
export function waitForSettle(
  context: SettleWaitContext,
  channel: string,
  options: WaitOptions,
): Promise<WaitResult> {
  return new Promise<WaitResult>((resolve, reject) => {
    new SettleWait(context, channel, options, resolve, reject).start();
  });
}
