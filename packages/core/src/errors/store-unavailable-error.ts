import { ToolfenceError } from './toolfence-error.js';

/**
 * What a failed store operation did to the store, as far as the store can tell:
 *
 * - `'not-applied'`: nothing changed. The operation never reached the store (a refused
 *   connection, a closed store, a lock the store never got), or the store answered that it
 *   refused it (a Redis error reply such as `BUSY`, a PostgreSQL error with a SQLSTATE: the
 *   statement rolled back). Trying again is safe and the only way to get it done.
 * - `'unknown'`: the operation may have been applied. It was sent and no answer came within its
 *   deadline (`operationTimeoutMs`, the guard's step budget), or the connection ended while it
 *   was in flight: a write can land after the error (a PostgreSQL row lock released later, a
 *   reply lost). Read the record before deciding again.
 *
 * A store that does not say is read as `'unknown'`: "nothing changed" is never assumed.
 */
export type StoreFailureOutcome = 'not-applied' | 'unknown';

/**
 * The idempotency store could not be reached or answered in a way that cannot be trusted. The
 * guard fails closed: an unreachable store is never read as permission to run the body.
 *
 * `outcome` says whether the failed operation may still have changed the store
 * ({@link StoreFailureOutcome}); an operator tool reports `'unknown'` as "reload and look", never
 * as "nothing was changed".
 */
export class StoreUnavailableError extends ToolfenceError {
  /** The store operation that failed, e.g. `claim`. */
  readonly operation: string;
  /** Whether the operation may have been applied; `'unknown'` unless the store knows it was not. */
  readonly outcome: StoreFailureOutcome;
  /**
   * @param options.outcome `'not-applied'` only when the store knows nothing changed (default
   *   `'unknown'`).
   */
  constructor(
    operation: string,
    reason: string,
    options?: { cause?: unknown; outcome?: StoreFailureOutcome },
  ) {
    super('STORE_UNAVAILABLE', `The idempotency store failed during ${operation}: ${reason}`, options);
    this.name = 'StoreUnavailableError';
    this.operation = operation;
    this.outcome = options?.outcome ?? 'unknown';
  }
  static override isInstance(error: unknown): error is StoreUnavailableError {
    return ToolfenceError.hasCode(error, 'STORE_UNAVAILABLE');
  }
  /**
   * True when `error` is a `StoreUnavailableError` (from any copy of the package) whose operation
   * may have been applied: its result is unknown, so the record must be read again before the
   * same decision is made twice.
   */
  static isOutcomeUnknown(error: unknown): boolean {
    return (
      StoreUnavailableError.isInstance(error) && (error as { outcome?: unknown }).outcome !== 'not-applied'
    );
  }
}
