import { ToolfenceError } from './toolfence-error.js';

/**
 * The idempotency key of a call cannot be derived (a key argument is missing, `key: 'call'`
 * without a call id, a business key function that threw or returned no string, a tenant or tool
 * name no store accepts, an argument that cannot be read or canonicalized, a key secret that is
 * too short). The call fails closed: the tool body does not run and nothing is claimed.
 */
export class KeyDerivationError extends ToolfenceError {
  readonly tool: string;
  /** The key argument that was missing or could not be read, when that is the reason. */
  readonly argument: string | undefined;
  /**
   * The member of the key input at fault, when one is: `'tenant'`, `'tool'`, `'runId'`,
   * `'callId'`, `'arguments'`, `'keyArguments'`, `'key'`, `'scope'` or `'secret'` (the names of
   * `KeyInput`), or `'input'` for the input object itself.
   */
  readonly field: string | undefined;
  constructor(
    tool: string,
    reason: string,
    options?: { argument?: string; field?: string; cause?: unknown },
  ) {
    super('KEY_DERIVATION_FAILED', `Cannot derive the idempotency key of tool "${tool}": ${reason}`, options);
    this.name = 'KeyDerivationError';
    this.tool = tool;
    this.argument = options?.argument;
    this.field = options?.field;
  }
  static override isInstance(error: unknown): error is KeyDerivationError {
    return ToolfenceError.hasCode(error, 'KEY_DERIVATION_FAILED');
  }
}
