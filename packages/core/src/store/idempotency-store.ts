/**
 * The store contract: types only. Every store (MemoryStore, RedisStore, PostgresStore, or a
 * user's own) implements {@link IdempotencyStore} and must pass the conformance suite exported
 * from `@toolfence/core/testing` (vitest) or `@toolfence/core/testing/node` (node:test, any runner).
 *
 * The full contract, written for store authors (every answer of every operation, the exact error
 * types, clocks, atomicity, input limits, retention): `docs/store-contract.md` in this package,
 * i.e. `node_modules/@toolfence/core/docs/store-contract.md`.
 *
 * Rules every implementation keeps:
 * - Every operation that decides ownership (claim, renew, complete, release, markIndeterminate,
 *   resolve) is ONE atomic step on the store (a Lua script, one SQL statement, one synchronous
 *   critical section). Never a read followed by a separate write.
 * - Lease and retention deadlines are judged by the store's own clock; all times in records are
 *   milliseconds since the Unix epoch on that clock.
 * - An approval (`decideApproval`) is consumed by the claim, in the claim's own atomic step.
 * - A record never holds the call's arguments, only their fingerprint.
 * - Any infrastructure failure is thrown as `StoreUnavailableError`; it is never reported as a
 *   status (an unreachable store is never read as permission). Input outside the limits of
 *   `store-input.ts` is refused with `StoreInputError` before anything is written.
 */
import type { ApprovalDecision } from './approval-records.js';
import type { DecideResult } from './approval-results.js';
import type {
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  ListOptions,
  ListPage,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionEntry,
  ResolveResult,
  WaitOptions,
  WaitResult,
} from './store-records.js';

export type {
  ApprovalCondition,
  ApprovalDecision,
  ApprovalEntry,
  ApprovalState,
} from './approval-records.js';
export type { DecideResult } from './approval-results.js';
export type {
  ClaimedState,
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  ListedRecord,
  ListOptions,
  ListPage,
  ListState,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  RecordState,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionAudit,
  ResolutionCondition,
  ResolutionEntry,
  ResolutionForce,
  ResolveResult,
  TakeoverMode,
  WaitOptions,
  WaitResult,
} from './store-records.js';

/**
 * A shared store of idempotency records. The contract: `docs/store-contract.md` in
 * `@toolfence/core` (every operation's answers, `error.type` values, clocks, atomic steps, input
 * limits, retention). `describeStoreConformance` in `@toolfence/core/testing` (or
 * `registerStoreConformance` in `@toolfence/core/testing/node`) checks it.
 */
export interface IdempotencyStore {
  /** Version of this contract the store implements. */
  readonly specificationVersion: 'v1';

  /**
   * The store's own deadline of one operation in milliseconds, when it has one (a remote store's
   * `operationTimeoutMs`, rule S5); absent for a store that answers or throws in process. The
   * guard bounds each of its steps by it, retries included (`GuardOptions.storeStepTimeoutMs`).
   */
  readonly operationTimeoutMs?: number;

  /**
   * Atomically: no live record → create `in_progress` with fence 1, attempt 1 → `acquired`.
   * Another tool (or fingerprint, with `checkFingerprint`) → `conflict`, before any state.
   * `in_progress` held by the same `owner` (the same request resent after its reply was lost) →
   * `acquired` again with the same fence and attempt, the lease restarted.
   * `completed` / `indeterminate` / `abandoned` → that state with the record.
   * `in_progress` with a live lease → `busy`. With an expired lease: `at-least-once` takes over
   * (fence + 1, attempt + 1 → `acquired`, `takeover: true`) or, when `attempt >= maxAttempts`,
   * marks it `abandoned`; `at-most-once` marks it `indeterminate`. Both record
   * `error.type === 'LeaseExpired'` with any non-empty message (docs/store-contract.md,
   * "Error types a store must produce").
   * The approval states (a store with `decideApproval`; docs/store-contract.md, "Approvals"), another
   * tool or fingerprint always a `conflict`: `awaiting_approval` → `approval_required`,
   * `denied` → `denied`, `approved` → consumed in this step (`acquired`, fence 1, attempt 1,
   * `record.approval` kept). No live record with `options.approval === 'required'` → an
   * `awaiting_approval` record is written → `approval_required`.
   * @throws StoreInputError (input outside docs/store-contract.md "What every store accepts"; nothing written)
   * @throws StoreUnavailableError
   */
  claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult>;

  /**
   * Extend the lease to now + `leaseMs` if `holder` is current (same fence and owner) and the record is `in_progress`.
   * @throws StoreUnavailableError
   */
  renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult>;

  /**
   * Record the outcome if `holder` is current (same fence and owner) and the record is not `completed` (an attempt
   * whose outcome was marked unknown may still state it). Retention restarts: the record
   * expires `retentionMs` after now. A superseded fence changes nothing and gets `stale`.
   * @throws StoreUnavailableError
   */
  complete(ref: RecordRef, holder: Holder, outcome: string, retentionMs: number): Promise<CompleteResult>;

  /**
   * Delete the record if `holder` is current (same fence and owner) and it is `in_progress` (a failed idempotent attempt,
   * or an effectful one that declared it had no effect).
   * @throws StoreUnavailableError
   */
  release(ref: RecordRef, holder: Holder): Promise<ReleaseResult>;

  /**
   * Keep the claim as `indeterminate` with the error, if `holder` is current (same fence and owner) and the record is
   * `in_progress`. Retention restarts.
   * @throws StoreUnavailableError
   */
  markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult>;

  /** Read a live record (null when absent or past retention). @throws StoreUnavailableError */
  get(ref: RecordRef): Promise<IdempotencyRecord | null>;

  /**
   * Operator: settle an `indeterminate` or `abandoned` record, or an `in_progress` one whose lease
   * expired by the store's clock, as completed with an outcome (retention restarts) or as released
   * (deleted). An `in_progress` record whose lease is live is `holder_alive` (nothing written)
   * unless `resolution.force`. With `resolution.expect`, only if the record's fence and owner are
   * those (else `changed`, nothing written): the operator settles the record it looked at, never
   * a later life of the key. Checks in this order: exists, holder, state, lease.
   * @throws StoreInputError (a bad resolution or `expect`; nothing written)
   * @throws StoreUnavailableError
   */
  resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult>;

  /**
   * Operator: record a decision on one call (docs/store-contract.md, "Approvals"), in ONE atomic
   * step: no live record → create it `approved` / `denied` (`not_found` with `expect`); another
   * tool or fingerprint → `conflict`; a claimed record → `consumed`; `expect` not the record's
   * owner → `changed`; `awaiting_approval` → the decision; `approved` → denied (revoked) or, approved
   * again, unchanged; `denied` stays denied (`denied` to an approval). The record lives
   * `retentionMs` from the decision. Optional while the stores of this repository gain it: a
   * store without it keeps no approvals, and the guard refuses a policy that needs one
   * (`StoreConfigurationError`) rather than run the call unapproved.
   * @throws StoreInputError (a bad decision or retention; nothing written)
   * @throws StoreUnavailableError
   */
  decideApproval?(ref: RecordRef, decision: ApprovalDecision, retentionMs: number): Promise<DecideResult>;

  /**
   * Operator: a page of records by state, oldest or newest first, from an index the store keeps
   * in the same atomic steps that change state (never a scan of the whole keyspace). Never
   * returns outcomes or arguments; never crosses tenants unless `allTenants` is set.
   * @throws StoreInputError (bad options or a cursor this store did not give; nothing read)
   * @throws StoreUnavailableError
   */
  list(options: ListOptions): Promise<ListPage>;

  /**
   * Operator: the resolutions of a key, newest first (also of a record a `released` resolution
   * deleted), while their retention lasts.
   * @throws StoreUnavailableError
   */
  resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]>;

  /**
   * Erase every record of a tenant, with its index entries and resolutions. Returns how many
   * records were erased. @throws StoreUnavailableError
   */
  forget(options: { readonly tenant: string }): Promise<number>;

  /**
   * Resolve when the record leaves `in_progress` (or is deleted), when its lease expires, or at
   * `timeoutMs`, whichever comes first. Event-driven where the store can be (pub/sub, LISTEN),
   * with polling as a fallback. Resolves `'settled'` at once if the record is not in progress.
   * @throws StoreUnavailableError
   */
  waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult>;

  /** Release connections and timers the store itself created. */
  close(): Promise<void>;
}
