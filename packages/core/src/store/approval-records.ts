// The approval vocabulary of the store contract: the states a record has before its claim when a
// call needs an operator's approval, the decision an operator records, and its audit. A leaf:
// store-records.ts builds the record and the answers on it (docs/store-contract.md, "Approvals").

/**
 * The states of a record's life BEFORE its claim, when a call needs an approval:
 * - `awaiting_approval`: a call asked (`ClaimOptions.approval: 'required'`); an operator should
 *   decide. Nothing ran.
 * - `approved`: an operator approved this call (tool, fingerprint); the next claim consumes the
 *   approval in its own atomic step and becomes the holder (fence 1, attempt 1).
 * - `denied`: an operator refused it; every claim answers `denied` until the record is forgotten
 *   or its retention ends.
 *
 * Such a record has `fence: 0` and `attempt: 0` (no attempt claimed it yet), so no holder's
 * write (renew, complete, release, markIndeterminate: fence >= 1) ever matches it.
 */
export type ApprovalState = 'awaiting_approval' | 'approved' | 'denied';

/**
 * The operator's decision as the record keeps it (`IdempotencyRecord.approval`), written in the
 * same atomic step as the decision and kept when the claim consumes the approval, for the rest of
 * the record's life. Never holds the arguments.
 */
export interface ApprovalEntry {
  /** `true` for an approval, `false` for a denial (a revoked approval is a denial). */
  readonly approved: boolean;
  /** The operator (a user id, an email): at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, in the operator's words: at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
  /** When it was decided (epoch ms, store clock). */
  readonly atMs: number;
}

/**
 * The request an operator decides on: the asking claim's `owner` (`IdempotencyRecord.owner` of
 * the `awaiting_approval` record they looked at). Without it a decision applies to whatever
 * request is under the key (same tool and fingerprint, always checked).
 */
export interface ApprovalCondition {
  /**
   * Decide only if the record's `owner` is this one (compared in the same atomic step); otherwise
   * nothing changes and the answer is `changed` (or `not_found` when no record is live).
   */
  readonly expect?: { readonly owner: string };
}

/**
 * An operator's decision on one call (`IdempotencyStore.decideApproval`): the call is named by its key
 * (the `RecordRef`) AND by its tool and argument fingerprint, both compared with the record's, so
 * an approval for other arguments never authorises this call.
 */
export interface ApprovalDecision extends ApprovalCondition {
  /** `true` approves the call once; `false` denies it (also revoking an approval not yet used). */
  readonly approved: boolean;
  /** The tool's name, as the guard claims it. */
  readonly tool: string;
  /** The fingerprint of the call's canonical arguments, as the guard claims it. */
  readonly fingerprint: string;
  /** The operator: a name (at most `MAX_NAME_LENGTH` code units). */
  readonly by?: string;
  /** Why: at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
  /**
   * For operators, recorded only when the decision creates the record (a call approved before
   * it asked): as `ClaimOptions.runId`, `callId`, `description`, `codec`.
   */
  readonly runId?: string;
  readonly callId?: string;
  readonly description?: string;
  readonly codec?: string;
}
