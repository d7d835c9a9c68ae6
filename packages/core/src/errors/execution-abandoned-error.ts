import { ToolfenceError } from './toolfence-error.js';

/**
 * An IDEMPOTENT call lost its holder `maxAttempts` times (workers died or stalled past their
 * lease) and is not tried again. Resolve the record with `guard.resolve(...)` to retry it.
 */
export class ExecutionAbandonedError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  readonly attempt: number;
  readonly fence: number;
  /** The SDK's tool call id of the call that stopped (`GuardedCall.callId`), when it had one. */
  readonly callId: string | undefined;
  constructor(details: { key: string; tool: string; attempt: number; fence: number; callId?: string }) {
    super(
      'EXECUTION_ABANDONED',
      `Tool "${details.tool}" was abandoned after ${details.attempt} lost attempt(s) ` +
        `(idempotency key ${details.key}, fence ${details.fence}); it is not retried automatically.`,
    );
    this.name = 'ExecutionAbandonedError';
    this.key = details.key;
    this.tool = details.tool;
    this.attempt = details.attempt;
    this.fence = details.fence;
    this.callId = details.callId;
  }
  static override isInstance(error: unknown): error is ExecutionAbandonedError {
    return ToolfenceError.hasCode(error, 'EXECUTION_ABANDONED');
  }
}
