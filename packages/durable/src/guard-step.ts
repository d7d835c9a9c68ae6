import {
  type Guard,
  type GuardedBody,
  Idempotency,
  type IdempotencyPolicy,
  isCallStopError,
} from '@toolfence/core';
import type { NonRetryableError, StepIdentity } from './step-identity.js';

/**
 * The policy of a step unless one is given: EFFECTFUL (at most once: a step whose outcome is
 * unknown stops, it is never run a second time) and keyed by the engine's step id.
 */
export const DEFAULT_STEP_POLICY: IdempotencyPolicy = Object.freeze({
  kind: Idempotency.EFFECTFUL,
  key: 'call',
});

/** Options of {@link guardStep}. */
export interface GuardStepOptions {
  /** The guard (and through it the store) every worker of the engine shares. */
  readonly guard: Guard;
  /** The engine's identity of the step: run id and step id. */
  readonly step: StepIdentity;
  /** The step's name, recorded as the tool name (part of the key). E.g. `chargeCard`. */
  readonly name: string;
  /**
   * The step's input. With the default key (the step id) it is fingerprinted, not keyed: the same
   * step id with other input is an `IdempotencyConflictError`. Default `{}`.
   */
  readonly arguments?: Record<string, unknown> | undefined;
  /**
   * Default {@link DEFAULT_STEP_POLICY}. A policy without `key` and `keyArguments` is keyed by the
   * step id (`key: 'call'`); give `key` or `keyArguments` to key by something else.
   */
  readonly policy?: IdempotencyPolicy | undefined;
  /** Tenant of the step. Default: the guard's. */
  readonly tenant?: string | undefined;
  /** Aborts waiting for a twin, and the body through its context signal. */
  readonly signal?: AbortSignal | undefined;
  /**
   * The engine's non-retryable error for toolfence's stops (`nonRetryableError(FatalError)`,
   * `temporalNonRetryable(ApplicationFailure)`). Default: the stop is thrown as it is, which an
   * engine that retries every error will retry (and the retry stops again, without running).
   */
  readonly nonRetryable?: NonRetryableError | undefined;
}

const stepPolicies = new WeakMap<IdempotencyPolicy, IdempotencyPolicy>();

/**
 * Run the body of a durable step at most once per step identity (EFFECTFUL) across the engine's
 * retries and its duplicate deliveries: the first delivery claims the key and runs the body; a
 * twin that arrives while it runs waits for it and gets the same result (replayed from the
 * store); a retry after it finished gets the recorded result without running the body.
 *
 * @returns the body's result, or the recorded one.
 * @throws whatever `nonRetryable` makes of an `IndeterminateOutcomeError` or
 *   `ExecutionAbandonedError` (the stop itself without it); the other errors of `guard.run`
 *   (`StoreUnavailableError`, `OutcomePendingError`, `IdempotencyConflictError`, ...) as they are,
 *   for the engine to retry or fail; and the body's own error when the policy releases it.
 */
export async function guardStep<T>(options: GuardStepOptions, body: GuardedBody<T>): Promise<T> {
  const { guard, step, name } = options;
  if (guard === undefined || typeof guard.run !== 'function') throw new TypeError('guardStep needs a guard');
  checkIdentity(step);
  try {
    return await guard.run(
      {
        tool: name,
        arguments: options.arguments ?? {},
        callId: step.stepId,
        runId: step.runId,
        tenant: options.tenant,
        policy: stepPolicyOf(options.policy ?? DEFAULT_STEP_POLICY),
        signal: options.signal,
      },
      body,
    );
  } catch (error) {
    if (options.nonRetryable !== undefined && isCallStopError(error)) throw options.nonRetryable(error);
    throw error;
  }
}

/** The policy keyed by the step id when it names no key of its own; the same object per policy. */
function stepPolicyOf(policy: IdempotencyPolicy): IdempotencyPolicy {
  if (policy.key !== undefined || policy.keyArguments !== undefined) return policy;
  let keyed = stepPolicies.get(policy);
  if (keyed === undefined) {
    keyed = { ...policy, key: 'call' };
    stepPolicies.set(policy, keyed);
  }
  return keyed;
}

function checkIdentity(step: StepIdentity): void {
  if (step === null || typeof step !== 'object') throw new TypeError('guardStep needs the step identity');
  for (const field of ['runId', 'stepId'] as const) {
    const value: unknown = step[field];
    if (typeof value !== 'string' || value.length === 0) {
      throw new TypeError(`guardStep needs the engine's ${field} (a non-empty string), got ${String(value)}`);
    }
  }
}
