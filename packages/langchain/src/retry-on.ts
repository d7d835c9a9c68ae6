import { findStopError } from '@toolfence/core';

/**
 * `@langchain/core`'s "retryable" marker (`stampRetryable` / `getRetryable` in
 * `@langchain/core/errors`): an own property under this registered symbol. The default `retryOn`
 * of langchain's `toolRetryMiddleware` and `modelRetryMiddleware` retries an error unless it is
 * `false`. Read and written here by its symbol, so no version of `@langchain/core` is required.
 */
const RETRYABLE = Symbol.for('langchain.errors.retryable');

/**
 * The `retryOn` predicate for a retry layer around toolfence-guarded tools: `false` for a
 * toolfence stop (`IndeterminateOutcomeError`, `ExecutionAbandonedError`, `StepStoppedError`,
 * also inside a `cause` chain or an `AggregateError`), whose call must not be repeated; for
 * any other error, langchain's own default (`getRetryable(error) ?? true`).
 *
 * toolfence marks its stops non-retryable already, so langchain's default `retryOn` refuses them
 * too; pass this one when you give a retry layer a `retryOn` of your own, composing it:
 * `retryOn: (error) => toolfenceRetryOn(error) && isTransient(error)`.
 *
 * @example toolRetryMiddleware({ retryOn: toolfenceRetryOn })
 */
export function toolfenceRetryOn(error: unknown): boolean {
  if (findStopError(error) !== undefined) return false;
  if (typeof error !== 'object' || error === null) return true;
  const marked: unknown = Object.getOwnPropertyDescriptor(error, RETRYABLE)?.value;
  return typeof marked === 'boolean' ? marked : true;
}

/**
 * Mark a stop non-retryable the way langchain reads it, so `toolRetryMiddleware()` with its
 * defaults does not run the call again. Returns the error. A frozen error is left as it is.
 */
export function markNotRetryable<E>(error: E): E {
  if (
    typeof error === 'object' &&
    error !== null &&
    Object.isExtensible(error) &&
    !Object.hasOwn(error, RETRYABLE)
  ) {
    Object.defineProperty(error, RETRYABLE, { value: false, enumerable: false, configurable: true });
  }
  return error;
}
