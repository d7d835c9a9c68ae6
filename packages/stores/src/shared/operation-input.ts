// Each operation's input checks (packages/core/src/store/store-input.ts), run by every store
// before it sends anything: bad input is a StoreInputError and nothing is written.
import * as input from '@toolfence/core/store';

/** The checks of each holder and claim operation, by operation name. */
export const checkInput = {
  claim(ref: input.RecordRef, options: input.ClaimOptions): void {
    input.checkRecordRef(ref);
    input.checkClaimOptions(options);
  },
  renew(ref: input.RecordRef, holder: input.Holder, leaseMs: number): void {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkLeaseMs(leaseMs);
  },
  complete(ref: input.RecordRef, holder: input.Holder, outcome: string, retentionMs: number): void {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkOutcome(outcome);
    input.checkRetentionMs(retentionMs);
  },
  release(ref: input.RecordRef, holder: input.Holder): void {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
  },
  markIndeterminate(
    ref: input.RecordRef,
    holder: input.Holder,
    error: input.RecordedError,
    retentionMs: number,
  ): void {
    input.checkRecordRef(ref);
    input.checkHolder(holder);
    input.checkRecordedError(error);
    input.checkRetentionMs(retentionMs);
  },
  decideApproval(ref: input.RecordRef, decision: input.ApprovalDecision, retentionMs: number): void {
    input.checkRecordRef(ref);
    input.checkApprovalDecision(decision);
    input.checkRetentionMs(retentionMs);
  },
};
