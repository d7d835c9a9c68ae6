// What the approval cases share: the store's decideApproval (a case fails, never skips, on a
// store without it), a decision on the suite's call, and a request written by a claim.
import type {
  ApprovalDecision,
  ClaimOptions,
  DecideResult,
  IdempotencyStore,
  RecordRef,
} from '../../store/idempotency-store.js';
import { fail, show } from '../check.js';
import { type CaseContext, DAY_MS } from './case-context.js';

/** The call the cases decide on: the suite's default tool and fingerprint. */
export function decision(c: CaseContext, overrides: Partial<ApprovalDecision> = {}): ApprovalDecision {
  const { tool, fingerprint } = c.options();
  return { approved: true, tool, fingerprint, ...overrides };
}

/** `store.decideApproval`, or a failure naming the missing operation. */
export function decide(
  store: IdempotencyStore,
  ref: RecordRef,
  what: ApprovalDecision,
  retentionMs = DAY_MS,
): Promise<DecideResult> {
  if (typeof store.decideApproval !== 'function') {
    fail(
      'the store has no decideApproval: approvals are part of the contract (docs/store-contract.md, ' +
        '"Approvals"); a store still being written passes skipApprovals: "not-implemented-yet"',
    );
  }
  return store.decideApproval(ref, what, retentionMs);
}

/** A claim that needs an approval. */
export function asking(c: CaseContext, overrides: Partial<ClaimOptions> = {}): ClaimOptions {
  return c.options({ approval: 'required', ...overrides });
}

/** A claim asks; the record is then `awaiting_approval`. Returns the asking options. */
export async function requested(c: CaseContext, ref: RecordRef): Promise<ClaimOptions> {
  const opts = asking(c, { runId: 'run-1', callId: 'call-1', description: 'refund A-1 EUR 30' });
  const result = await c.store.claim(ref, opts);
  if (result.status !== 'approval_required') {
    fail(`a claim that needs an approval of a free key should be approval_required, got ${show(result)}`);
  }
  return opts;
}

/** An approved call (decided before any claim asked). */
export async function approved(
  c: CaseContext,
  ref: RecordRef,
  on: IdempotencyStore = c.store,
): Promise<void> {
  const result = await decide(on, ref, decision(c, { by: 'ops@example.com', reason: 'checked' }));
  if (result.status !== 'decided') fail(`approving a free key should be decided, got ${show(result)}`);
}
