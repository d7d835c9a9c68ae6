import { ToolfenceError } from './toolfence-error.js';

/**
 * An outcome cannot be encoded (or a recorded outcome decoded) by the guard's codec: a value the
 * codec cannot serialise (a BigInt, a cycle), a codec that threw, or one that returned something
 * other than a well-formed string. The original error is the `cause`.
 */
export class OutcomeEncodingError extends ToolfenceError {
  /** `encode` or `decode`. */
  readonly direction: 'encode' | 'decode';
  readonly tool: string | undefined;
  constructor(
    direction: 'encode' | 'decode',
    reason: string,
    options?: { tool?: string | undefined; cause?: unknown },
  ) {
    const subject = options?.tool === undefined ? 'an outcome' : `the outcome of tool "${options.tool}"`;
    super('OUTCOME_ENCODING_FAILED', `Cannot ${direction} ${subject}: ${reason}`, options);
    this.name = 'OutcomeEncodingError';
    this.direction = direction;
    this.tool = options?.tool;
  }
  static override isInstance(error: unknown): error is OutcomeEncodingError {
    return ToolfenceError.hasCode(error, 'OUTCOME_ENCODING_FAILED');
  }
}
