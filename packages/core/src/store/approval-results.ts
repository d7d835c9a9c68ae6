// The answer of an operator's decision on a call (IdempotencyStore.decideApproval): types only, apart
// from store-records.ts so the record's file stays the record's.
import type { IdempotencyRecord } from './store-records.js';

/**
 * Answer of `IdempotencyStore.decideApproval`, decided in the same atomic step as the decision.
 * Checked in this order: the record exists (or is created), its tool and fingerprint, whether a
 * claim has used it, `expect`, then its approval state.
 */
export type DecideResult =
  /**
   * The record now holds this decision: written (created, or `awaiting_approval` / `approved`
   * changed), or the same decision was already there (nothing written; `record.approval` is the
   * first one's audit).
   */
  | { readonly status: 'decided'; readonly record: IdempotencyRecord }
  /** An approval found a denial: a denial stays a denial. Nothing changed. */
  | { readonly status: 'denied'; readonly record: IdempotencyRecord }
  /**
   * The key was claimed (`in_progress`, `completed`, `indeterminate`, `abandoned`): an approval
   * was used, or the call ran without one; a decision changes nothing now. Nothing changed.
   */
  | { readonly status: 'consumed'; readonly record: IdempotencyRecord }
  /** The record is of another tool or other arguments. Nothing changed. */
  | { readonly status: 'conflict'; readonly record: IdempotencyRecord }
  /** `expect` names another request than the one under the key. Nothing changed. */
  | { readonly status: 'changed'; readonly record: IdempotencyRecord }
  /** `expect` was given and no record is live (the request expired or was forgotten). */
  | { readonly status: 'not_found' };
