import { ToolfenceError } from './toolfence-error.js';

/**
 * The idempotency store could not be reached or answered in a way that cannot be trusted. The
 * guard fails closed: an unreachable store is never read as permission to run the body.
 */
export class StoreUnavailableError extends ToolfenceError {
  /** The store operation that failed, e.g. `claim`. */
  readonly operation: string;
  constructor(operation: string, reason: string, options?: { cause?: unknown }) {
    super('STORE_UNAVAILABLE', `The idempotency store failed during ${operation}: ${reason}`, options);
    this.name = 'StoreUnavailableError';
    this.operation = operation;
  }
  static override isInstance(error: unknown): error is StoreUnavailableError {
    return ToolfenceError.hasCode(error, 'STORE_UNAVAILABLE');
  }
}
