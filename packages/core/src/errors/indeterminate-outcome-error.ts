import { ToolfenceError } from './toolfence-error.js';

/**
 * An EFFECTFUL call may or may not have taken effect, and nobody can say which: the body threw
 * an error not known to mean "no effect", it timed out, or its holder lost its lease. The call is
 * not repeated. Verify with the system the tool touched, then settle the record with
 * `guard.resolve(...)`.
 */
export class IndeterminateOutcomeError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  readonly attempt: number;
  readonly fence: number;
  /** What made the outcome unknown: the error's type name as recorded. */
  readonly reasonType: string;
  /** The SDK's tool call id of the call that stopped (`GuardedCall.callId`), when it had one. */
  readonly callId: string | undefined;
  constructor(
    details: {
      key: string;
      tool: string;
      attempt: number;
      fence: number;
      reasonType: string;
      reason: string;
      callId?: string;
    },
    options?: { cause?: unknown },
  ) {
    super(
      'INDETERMINATE_OUTCOME',
      `The outcome of tool "${details.tool}" is unknown (${details.reasonType}: ${details.reason}). ` +
        'The action may have happened: do not simply retry it; verify with the system it touched. ' +
        `Idempotency key ${details.key}, attempt ${details.attempt}, fence ${details.fence}.`,
      options,
    );
    this.name = 'IndeterminateOutcomeError';
    this.key = details.key;
    this.tool = details.tool;
    this.attempt = details.attempt;
    this.fence = details.fence;
    this.reasonType = details.reasonType;
    this.callId = details.callId;
  }
  static override isInstance(error: unknown): error is IndeterminateOutcomeError {
    return ToolfenceError.hasCode(error, 'INDETERMINATE_OUTCOME');
  }
}
