// The vocabulary every part of the guard shares: the call as given, the body, an attempt's
// numbers and what a call answers. A leaf: it takes types from other leaves only, so no part
// of the guard ever imports the file that uses it.
import type { IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { ToolCallContext } from './call-context.js';
import type { GuardEvent, GuardEventType } from './guard-events.js';

/** One call to guard. */
export interface GuardedCall {
  /** Tool name; part of the key. */
  readonly tool: string;
  /** The call's arguments, as the tool receives them (a plain object). */
  readonly arguments: Record<string, unknown>;
  /** The SDK's tool call id (LangChain `tool_call.id`, AI SDK `toolCallId`). */
  readonly callId?: string | undefined;
  /** The agent run (thread, conversation) the call belongs to; part of `'run'`-scoped keys. */
  readonly runId?: string | undefined;
  /** Overrides the guard's tenant for this call. */
  readonly tenant?: string | undefined;
  readonly policy: IdempotencyPolicy;
  /** The caller's signal: aborts waiting, and aborts the body through its context signal. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The body `guard.run` runs at most once: it gets the call's context and returns the outcome
 * (or a promise of it). Exported as `GuardedBody`.
 */
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

/**
 * What hears one call's events besides the listener: its span and metric points
 * (telemetry/call-trace.ts), when the guard has telemetry.
 */
export interface CallObserver {
  /** A guard event of this call, before the listener gets it. */
  event(type: GuardEventType, info: AttemptInfo, extra: Partial<GuardEvent> | undefined): void;
  /** After the caller was answered, the call's record was left indeterminate. */
  lateIndeterminate(errorType: string | undefined): void;
}
