import type { Holder } from '../store/idempotency-store.js';
import type { CallState } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';
import type { AttemptInfo } from './guard-types.js';

/**
 * A claim this call holds, as the parts that run and settle it see it: the guard's ports, the
 * call, the holder its writes are conditioned on, and the attempt it is. Made once per acquired
 * claim (claim-loop.ts).
 */
export interface HeldClaim {
  readonly runtime: GuardRuntime;
  readonly state: CallState;
  readonly holder: Holder;
  readonly info: AttemptInfo;
}
