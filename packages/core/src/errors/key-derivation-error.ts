import { ToolfenceError } from './toolfence-error.js';

/**
 * The idempotency key of a call cannot be derived (a key argument is missing, `key: 'call'`
 * without a call id, a business key function that threw or returned no string). The call fails
 * closed: the tool body does not run and nothing is claimed.
 */
export class KeyDerivationError extends ToolfenceError {
  readonly tool: string;
  /** The key argument that was missing, when that is the reason. */
  readonly argument: string | undefined;
  constructor(tool: string, reason: string, options?: { argument?: string; cause?: unknown }) {
    super('KEY_DERIVATION_FAILED', `Cannot derive the idempotency key of tool "${tool}": ${reason}`, options);
    this.name = 'KeyDerivationError';
    this.tool = tool;
    this.argument = options?.argument;
  }
  static override isInstance(error: unknown): error is KeyDerivationError {
    return ToolfenceError.hasCode(error, 'KEY_DERIVATION_FAILED');
  }
}
