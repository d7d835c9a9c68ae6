import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { describeError } from './call-errors.js';
import { type Answer, type CallState, NO_ATTEMPT } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';

// Identical calls in flight in this process share one claim: the first leads, the rest follow it
// and take its recorded outcome, so N local duplicates cost the store one claim, not N.

/** Sentinel: a followed leader settled without a recorded outcome. */
export const NO_ANSWER = Symbol('no answer');

/**
 * An identical call in flight in this process, which later identical calls follow. The promise is
 * made only when a first follower arrives: a call nobody follows allocates nothing for it.
 */
export class Flight {
  private promise: Promise<Answer<unknown> | undefined> | undefined;
  private resolvePromise: ((answer: Answer<unknown> | undefined) => void) | undefined;
  private settled = false;
  private answer: Answer<unknown> | undefined;

  /** Leads the identical calls that find it under `flightKey` in `flights`. */
  constructor(
    private readonly flights: Map<string, Flight>,
    private readonly flightKey: string,
  ) {
    flights.set(flightKey, this);
  }

  get done(): Promise<Answer<unknown> | undefined> {
    if (this.settled) return Promise.resolve(this.answer);
    this.promise ??= new Promise((resolve) => {
      this.resolvePromise = resolve;
    });
    return this.promise;
  }

  finish(answer: Answer<unknown> | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.answer = answer;
    this.resolvePromise?.(answer);
  }

  /** No later identical call follows this one. */
  land(): void {
    if (this.flights.get(this.flightKey) === this) this.flights.delete(this.flightKey);
  }

  /** Sends the followers to the store: the leader's lease is lost, it no longer leads. */
  release(): void {
    this.land();
    this.finish(undefined);
  }
}

/** Wait for the leader of an identical in-flight call; NO_ANSWER when it recorded no outcome. */
export async function follow<T>(
  runtime: GuardRuntime,
  state: CallState,
  leader: Flight,
): Promise<T | typeof NO_ANSWER> {
  const { call, policy, waitStartedMs } = state;
  runtime.emit('tool.waiting', state, NO_ATTEMPT);
  const remainingMs = policy.waitTimeoutMs - (performance.now() - waitStartedMs);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const answer = await Promise.race([
      leader.done,
      new Promise<'timeout'>((resolve, reject) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, remainingMs));
        if (call.signal !== undefined) {
          call.signal.throwIfAborted();
          onAbort = () => reject(call.signal?.reason);
          call.signal.addEventListener('abort', onAbort, { once: true });
        }
      }),
    ]);
    if (answer === 'timeout') {
      const pending = new OutcomePendingError({
        key: state.ref.key,
        tool: call.tool,
        waitedMs: Math.round(performance.now() - waitStartedMs),
      });
      runtime.emit('tool.pending', state, NO_ATTEMPT, { error: describeError(pending) });
      throw pending;
    }
    if (answer === undefined || answer.encoded === undefined) return NO_ANSWER;
    runtime.emit('tool.deduplicated', state, answer);
    // Each follower decodes its own copy: no two callers share a mutable result.
    return runtime.decodeOutcome(answer.encoded, call.tool) as T;
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) call.signal?.removeEventListener('abort', onAbort);
  }
}
