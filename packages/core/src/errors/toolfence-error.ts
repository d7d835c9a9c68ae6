/**
 * Every error code toolfence throws. A closed union: new codes are a breaking change.
 */
export type ToolfenceErrorCode =
  | 'CANONICALIZATION_FAILED'
  | 'KEY_DERIVATION_FAILED'
  | 'INVALID_POLICY'
  | 'IDEMPOTENCY_CONFLICT'
  | 'INDETERMINATE_OUTCOME'
  | 'EXECUTION_ABANDONED'
  | 'STEP_STOPPED'
  | 'OUTCOME_PENDING'
  | 'TOOL_TIMEOUT'
  | 'STORE_UNAVAILABLE'
  | 'STORE_INPUT_INVALID'
  | 'STORE_MISCONFIGURED'
  | 'OUTCOME_ENCODING_FAILED'
  | 'LEASE_LOST'
  | 'HOLDER_ALIVE'
  | 'APPROVAL_REQUIRED'
  | 'APPROVAL_DENIED';

const marker = 'toolfence.error';
const symbol = Symbol.for(marker);

/**
 * Base class of every error toolfence throws.
 *
 * Recognise errors with the static `isInstance` methods rather than `instanceof`: they work
 * even when two copies of `@toolfence/core` are installed (the `Symbol.for` marker is shared
 * across copies; the class identity is not).
 */
export class ToolfenceError extends Error {
  /** Cross-copy marker read by `isInstance`. */
  readonly [symbol] = true;
  /** Machine-readable code, one of {@link ToolfenceErrorCode}. */
  readonly code: ToolfenceErrorCode;

  constructor(code: ToolfenceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.name = 'ToolfenceError';
  }

  /** True for any toolfence error, from any copy of the package. */
  static isInstance(error: unknown): error is ToolfenceError {
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[symbol] === true;
  }

  /** True when `error` is a toolfence error with the given code. */
  static hasCode<C extends ToolfenceErrorCode>(
    error: unknown,
    code: C,
  ): error is ToolfenceError & { code: C } {
    return ToolfenceError.isInstance(error) && error.code === code;
  }
}
