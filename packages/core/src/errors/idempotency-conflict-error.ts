import { ToolfenceError } from './toolfence-error.js';

/**
 * An idempotency key was reused with other arguments or for another tool. Only possible when the
 * key is not derived from the arguments (a business key or the `'call'` key). Mirrors Stripe and
 * the IETF Idempotency-Key draft (draft-ietf-httpapi-idempotency-key-header, 422 on reuse).
 */
export class IdempotencyConflictError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  /** The tool that holds the key (may equal `tool` when only the arguments differ). */
  readonly recordedTool: string;
  constructor(key: string, tool: string, recordedTool: string) {
    const reason =
      recordedTool === tool ? 'was first used with different arguments' : `belongs to tool "${recordedTool}"`;
    super(
      'IDEMPOTENCY_CONFLICT',
      `Idempotency key ${key} of tool "${tool}" ${reason}; a reused key must repeat the same request. Use a new key for a new request.`,
    );
    this.name = 'IdempotencyConflictError';
    this.key = key;
    this.tool = tool;
    this.recordedTool = recordedTool;
  }
  static override isInstance(error: unknown): error is IdempotencyConflictError {
    return ToolfenceError.hasCode(error, 'IDEMPOTENCY_CONFLICT');
  }
}
