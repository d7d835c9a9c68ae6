import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import type { CallState } from './call-state.js';
import type { Flight } from './flight.js';
import type { GuardRuntime } from './guard-runtime.js';
import { NO_ATTEMPT } from './guard-types.js';
import { describeError } from './recorded-error.js';

// Identical calls in flight in this process share one claim: the first leads, the rest follow it
// and take its recorded outcome, so N local duplicates cost the store one claim, not N.

/** Sentinel: a followed leader settled without a recorded outcome. */
export const NO_ANSWER = Symbol('no answer');

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
