import { ToolfenceError } from './toolfence-error.js';

/**
 * An operator denied this call (or revoked its approval before it was used): nothing ran, and
 * every repeat, resume or replay of it is denied while the store keeps the record (its retention;
 * `forget` erases it). Who and why are in the record (`approval.by`, `approval.reason`), not in
 * this message: that text is the operator's, for people reading the record.
 */
export class ApprovalDeniedError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  /** The SDK's tool call id of the call (`GuardedCall.callId`), when it had one. */
  readonly callId: string | undefined;
  /** 0: no attempt ran (the same field as the other stops, for code that reads one stop). */
  readonly attempt = 0;
  /** 0: no attempt claimed the key. */
  readonly fence = 0;
  constructor(details: { key: string; tool: string; callId?: string }) {
    super(
      'APPROVAL_DENIED',
      `Tool "${details.tool}" was denied by an operator (idempotency key ${details.key}); it did ` +
        'not run and will not run for this call.',
    );
    this.name = 'ApprovalDeniedError';
    this.key = details.key;
    this.tool = details.tool;
    this.callId = details.callId;
  }
  static override isInstance(error: unknown): error is ApprovalDeniedError {
    return ToolfenceError.hasCode(error, 'APPROVAL_DENIED');
  }
}
