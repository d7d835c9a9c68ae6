// A key-secret rotation (`keySecret: [current, previous]`): a call whose claim under the current
// secret started a fresh record also looks its key up under the previous one, so a call made under
// the old key is replayed, stopped or waited for, never run again. Why: docs/key-spec.md 6.4.
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import type { CallState } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';
import type { HeldClaim } from './held-claim.js';

/** Longest random pause (ms) before claiming again after giving way to a racing rotation. */
const MAX_TIE_PAUSE_MS = 20;

/**
 * After `state`'s claim started a fresh life (fence 1, attempt 1) held by `holder`: the call state
 * to claim instead, or undefined to run the body here. When another state is returned, this
 * claim has been released (nothing ran).
 * - Under the previous secret: the record there was gone by the time it was claimed; the fresh
 *   life is released and the call goes back to the current secret.
 * - Under the current secret: a record under the previous secret (any state) means the call is
 *   answered there, through the store's own claim decision (replay, stop, wait, takeover).
 * @throws StoreUnavailableError the previous key could not be read (the claim released first)
 */
export async function rotatedLife(held: HeldClaim): Promise<CallState | undefined> {
  const { runtime, state, holder } = held;
  const current = state.underCurrentSecret;
  if (current !== undefined) {
    await runtime.releaseQuietly(state.ref, holder);
    // Two guards rotating in opposite directions (`[old, new]` beside `[new, old]`) can each see
    // the other's fresh claim and both give way; a random pause breaks the tie, and the call's
    // waitTimeoutMs bounds how long it keeps giving way.
    const waitedMs = performance.now() - state.waitStartedMs;
    if (waitedMs >= state.policy.waitTimeoutMs) {
      throw new OutcomePendingError({
        key: current.ref.key,
        tool: state.call.tool,
        waitedMs: Math.round(waitedMs),
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 1 + Math.random() * MAX_TIE_PAUSE_MS));
    return current;
  }
  const derive = state.underPreviousSecret;
  if (derive === undefined) return undefined;
  let previous: CallState;
  let found: boolean;
  try {
    previous = derive();
    const ref = previous.ref;
    found = (await runtime.storeCall('get', () => runtime.store.get(ref))) !== null;
  } catch (error) {
    // Nothing ran: the fresh claim must not be left to expire into an indeterminate record.
    await runtime.releaseQuietly(state.ref, holder);
    throw error;
  }
  if (!found) return undefined;
  await runtime.releaseQuietly(state.ref, holder);
  return previous;
}

/**
 * Under the current secret, a call that needs an approval found (or just asked) a request: the
 * call state under the previous secret when its key has a record there (the request asked,
 * approved or denied before the rotation, or the run it allowed), else undefined. Nothing is held,
 * so nothing is released; the request under the current key stays for the operator's list.
 * @throws StoreUnavailableError the previous key could not be read
 */
export async function previousRequest(
  runtime: GuardRuntime,
  state: CallState,
): Promise<CallState | undefined> {
  const derive = state.underPreviousSecret;
  if (derive === undefined) return undefined;
  const previous = derive();
  const ref = previous.ref;
  return (await runtime.storeCall('get', () => runtime.store.get(ref))) === null ? undefined : previous;
}

/**
 * Where an operator's decision on the call of `state` belongs during a rotation: under the
 * previous key when the call has a record there and none under the current key (the request it
 * asked before the rotation), else under the current key, where a decision ahead of the call is made.
 * @throws StoreUnavailableError a key could not be read
 */
export async function decisionLife(runtime: GuardRuntime, state: CallState): Promise<CallState> {
  if (state.underPreviousSecret === undefined) return state;
  const current = state.ref;
  if ((await runtime.storeCall('get', () => runtime.store.get(current))) !== null) return state;
  return (await previousRequest(runtime, state)) ?? state;
}
