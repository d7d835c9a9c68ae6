import type { ResolvedPolicy } from '../policy/idempotency-policy.js';
import type { RecordRef } from '../store/idempotency-store.js';
import type { ToolCallContext } from './call-context.js';
import type { GuardedCall } from './guard.js';
import type { Flight } from './in-flight-calls.js';

// The vocabulary the parts of the guard share: one call, what it has done, what it answers.

/** One guarded call, as the parts of the guard see it. */
export interface CallState {
  readonly call: GuardedCall;
  readonly policy: ResolvedPolicy;
  readonly ref: RecordRef;
  readonly runId: string | undefined;
  /** What the store compares to tell a reused key with other arguments (the key itself when unchecked). */
  readonly fingerprint: string;
  readonly checkFingerprint: boolean;
  /** When the call began (monotonic ms): `waitTimeoutMs` counts from here. */
  readonly waitStartedMs: number;
  /** The in-flight call this call leads, if it leads one: a lost lease sends its followers to the store. */
  flight: Flight | undefined;
}

/** A guarded tool's body. */
export type Body<T> = (context: ToolCallContext) => T | PromiseLike<T>;

/** The attempt and fencing token an event or an error concerns. */
export interface AttemptInfo {
  readonly attempt: number;
  readonly fence: number;
}

/** Attempt details of an event that concerns no known attempt. */
export const NO_ATTEMPT: AttemptInfo = { attempt: 0, fence: 0 };

/** What one guard.run call has done so far, across its claims (rule G1). */
export interface CallProgress {
  /** Bodies this call has entered. */
  executions: number;
  /** The value this call's body returned and its encoding, once it returned one. */
  ownResult: { readonly value: unknown; readonly encoded: string } | undefined;
  /** Attempt and fence of the last attempt that entered the body. */
  lastAttempt: AttemptInfo | undefined;
}

/** What a call answered, with the encoded outcome when one is recorded in the store. */
export interface Answer<T> {
  readonly value: T;
  /** The outcome as recorded; undefined when nothing was recorded for this answer. */
  readonly encoded: string | undefined;
  readonly attempt: number;
  readonly fence: number;
}

/** Sentinel: the attempt lost its lease; the caller must take the current holder's answer. */
export const SUPERSEDED = Symbol('superseded');
