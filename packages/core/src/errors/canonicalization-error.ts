import { ToolfenceError } from './toolfence-error.js';

/**
 * A value cannot be encoded as canonical JSON (RFC 8785 + NFC). `path` is an RFC 6901 JSON
 * pointer to the offending value ("" for the root).
 */
export class CanonicalizationError extends ToolfenceError {
  readonly path: string;
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super('CANONICALIZATION_FAILED', `Cannot canonicalize the value at "${path}": ${reason}`, options);
    this.name = 'CanonicalizationError';
    this.path = path;
  }
  static override isInstance(error: unknown): error is CanonicalizationError {
    return ToolfenceError.hasCode(error, 'CANONICALIZATION_FAILED');
  }
}
