import { ToolfenceError } from './toolfence-error.js';

/**
 * The call needs an operator's approval and has none yet: nothing ran. The store keeps the
 * request (`awaiting_approval`, listed with `list({ states: ['awaiting_approval'] })`); approve it
 * with `guard.approve(call, …)` (or deny it with `guard.deny`), then run the call again: the claim
 * consumes the approval, once (docs/approvals.md). A stop like an unknown outcome: the run must not
 * go on without a person, and retrying changes nothing until someone decides.
 */
export class ApprovalRequiredError extends ToolfenceError {
  /** The idempotency key of the call, which `guard.approve` / `guard.deny` decide on. */
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
      'APPROVAL_REQUIRED',
      `Tool "${details.tool}" needs an operator's approval before it runs (idempotency key ` +
        `${details.key}); nothing ran. Approve or deny it, then run the call again.`,
    );
    this.name = 'ApprovalRequiredError';
    this.key = details.key;
    this.tool = details.tool;
    this.callId = details.callId;
  }
  static override isInstance(error: unknown): error is ApprovalRequiredError {
    return ToolfenceError.hasCode(error, 'APPROVAL_REQUIRED');
  }
}
