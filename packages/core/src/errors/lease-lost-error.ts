import { ToolfenceError } from './toolfence-error.js';

/**
 * The caller's lease on a call was lost: a renewal failed because another worker took the call
 * over with a higher fencing token, or the record was settled by someone else. The body's
 * `signal` is aborted with this error; whatever the body still returns is recorded only if its
 * fence is current.
 */
export class LeaseLostError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  readonly fence: number;
  constructor(
    details: { key: string; tool: string; fence: number; reason: string },
    options?: { cause?: unknown },
  ) {
    super(
      'LEASE_LOST',
      `Lease on tool "${details.tool}" lost (idempotency key ${details.key}, fence ${details.fence}): ${details.reason}`,
      options,
    );
    this.name = 'LeaseLostError';
    this.key = details.key;
    this.tool = details.tool;
    this.fence = details.fence;
  }
  static override isInstance(error: unknown): error is LeaseLostError {
    return ToolfenceError.hasCode(error, 'LEASE_LOST');
  }
}
