import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import type { RenewResult } from '../store/idempotency-store.js';
import { asStoreError } from './call-errors.js';
import type { CallState } from './call-state.js';
import { SUPERSEDED } from './guard-types.js';
import type { HeldClaim } from './held-claim.js';

/** Renewals tried when claim replies keep arriving after the lease view lapsed (rule G2). */
const LATE_REPLY_ROUNDS = 3;

/**
 * Rule G2's common case: this worker's view of the lease, counted from when the claim was SENT,
 * is still live, so the body may be entered without a renewal ({@link confirmLease} is then not
 * needed; it would answer `sentAtMs`).
 */
export function leaseViewLive(state: CallState, sentAtMs: number, nowMs: number): boolean {
  return nowMs < sentAtMs + state.policy.leaseMs;
}

/**
 * Rule G2: the body is entered only while this worker's view of its lease is live, counted
 * from when the claim was SENT. A reply that arrives after that view lapsed is checked with a
 * renewal first. Returns when the lease view starts (monotonic ms), or SUPERSEDED when the
 * claim was lost before the body was entered (the caller then asks as a fresh caller).
 * @throws StoreUnavailableError after LATE_REPLY_ROUNDS late replies, or when a renewal fails
 */
export async function confirmLease(held: HeldClaim, sentAtMs: number): Promise<number | typeof SUPERSEDED> {
  const { runtime, state, holder } = held;
  const { ref, policy } = state;
  let leaseFromMs = sentAtMs;
  for (let round = 0; performance.now() >= leaseFromMs + policy.leaseMs; round++) {
    if (round === LATE_REPLY_ROUNDS) {
      await runtime.releaseQuietly(ref, holder);
      throw new StoreUnavailableError(
        'claim',
        `the store answered later than the lease (${policy.leaseMs} ms) ${LATE_REPLY_ROUNDS} times; the body was not started`,
      );
    }
    const renewSentAtMs = performance.now();
    let renewed: RenewResult;
    try {
      renewed = await runtime.store.renew(ref, holder, policy.leaseMs);
    } catch (error) {
      await runtime.releaseQuietly(ref, holder);
      throw asStoreError('renew', error);
    }
    if (renewed.status !== 'renewed') return SUPERSEDED;
    leaseFromMs = renewSentAtMs;
  }
  return leaseFromMs;
}
