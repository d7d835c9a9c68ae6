import { ToolfenceError } from './toolfence-error.js';

/**
 * An EFFECTFUL call may or may not have taken effect, and nobody can say which: the body threw
 * an error not known to mean "no effect", it timed out, or its holder lost its lease. The call is
 * not repeated. Verify with the system the tool touched, then settle the record with
 * `guard.resolve(...)` (or give the policy a `reconcile` probe that asks it: docs/reconcile.md).
 */
export class IndeterminateOutcomeError extends ToolfenceError {
  readonly key: string;
  readonly tool: string;
  readonly attempt: number;
  readonly fence: number;
  /** What made the outcome unknown: the error's type name as recorded. */
  readonly reasonType: string;
  /** What made the outcome unknown, in words (as in the message). */
  readonly reason: string;
  /** The SDK's tool call id of the call that stopped (`GuardedCall.callId`), when it had one. */
  readonly callId: string | undefined;
  /**
   * When the policy's reconcile probe was asked before this error was thrown: what it answered
   * (`unknown`, `failed`, `timeout`, `busy`, `changed`…, docs/reconcile.md) after how many tries.
   * Never the arguments or the probe's outcome.
   */
  readonly reconcile: { readonly verdict: string; readonly tries: number } | undefined;
  constructor(
    details: {
      key: string;
      tool: string;
      attempt: number;
      fence: number;
      reasonType: string;
      reason: string;
      callId?: string;
      reconcile?: { readonly verdict: string; readonly tries: number };
    },
    options?: { cause?: unknown },
  ) {
    super(
      'INDETERMINATE_OUTCOME',
      `The outcome of tool "${details.tool}" is unknown (${details.reasonType}: ${details.reason}). ` +
        'The action may have happened: do not simply retry it; verify with the system it touched. ' +
        `Idempotency key ${details.key}, attempt ${details.attempt}, fence ${details.fence}.` +
        (details.reconcile === undefined
          ? ''
          : ` The reconcile probe could not settle it (${details.reconcile.verdict} after ${details.reconcile.tries} ${details.reconcile.tries === 1 ? 'try' : 'tries'}).`),
      options,
    );
    this.name = 'IndeterminateOutcomeError';
    this.key = details.key;
    this.tool = details.tool;
    this.attempt = details.attempt;
    this.fence = details.fence;
    this.reasonType = details.reasonType;
    this.reason = details.reason;
    this.callId = details.callId;
    this.reconcile =
      details.reconcile === undefined
        ? undefined
        : { verdict: details.reconcile.verdict, tries: details.reconcile.tries };
  }
  static override isInstance(error: unknown): error is IndeterminateOutcomeError {
    return ToolfenceError.hasCode(error, 'INDETERMINATE_OUTCOME');
  }
}
