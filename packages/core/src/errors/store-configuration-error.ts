import { ToolfenceError } from './toolfence-error.js';

/**
 * The store is reachable but not set up to work: its schema or table is missing
 * (`ensureSchema()` was not called), its options are invalid, or its backend refuses the store's
 * own commands for a reason no retry will fix (a permission, a read-only replica). Not an outage:
 * it names what to fix. Never thrown for a claim that could have landed.
 */
export class StoreConfigurationError extends ToolfenceError {
  /** The store that is misconfigured, e.g. `PostgresStore`. */
  readonly store: string;
  constructor(store: string, reason: string, options?: { cause?: unknown }) {
    super('STORE_MISCONFIGURED', `${store} is not set up: ${reason}`, options);
    this.name = 'StoreConfigurationError';
    this.store = store;
  }
  static override isInstance(error: unknown): error is StoreConfigurationError {
    return ToolfenceError.hasCode(error, 'STORE_MISCONFIGURED');
  }
}
