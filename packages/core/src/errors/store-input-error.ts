import { ToolfenceError } from './toolfence-error.js';

/**
 * A store was given input that no store accepts (docs/store-contract.md, "What every store
 * accepts"): a tenant, tool, key or owner that is empty, too long, not well-formed Unicode or
 * contains NUL; a duration outside its documented range; an outcome that is not a well-formed
 * string. Thrown before anything is written: nothing was claimed or changed. It is never an outage,
 * so retrying the same input cannot help.
 */
export class StoreInputError extends ToolfenceError {
  /** The input that was refused, e.g. `tenant`, `retentionMs`, `outcome`. */
  readonly field: string;
  constructor(field: string, reason: string, options?: { cause?: unknown }) {
    super('STORE_INPUT_INVALID', `The idempotency store cannot take this ${field}: ${reason}`, options);
    this.name = 'StoreInputError';
    this.field = field;
  }
  static override isInstance(error: unknown): error is StoreInputError {
    return ToolfenceError.hasCode(error, 'STORE_INPUT_INVALID');
  }
}
