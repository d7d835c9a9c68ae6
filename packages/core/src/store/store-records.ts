// The store contract's data: records and who holds them, the answers of each operation, operator
// resolutions and listing. Types only; the interface that takes and answers them is
// idempotency-store.ts (docs/store-contract.md describes both).
import type { ApprovalEntry, ApprovalState } from './approval-records.js';

/**
 * Lifecycle of a record. A released record is deleted, not kept with a state. The
 * {@link ApprovalState}s come before a claim, for a call that needs an operator's approval.
 */
export type RecordState = 'in_progress' | 'completed' | 'indeterminate' | 'abandoned' | ApprovalState;

/** The states a claim leaves a record in (every state but the approval states). */
export type ClaimedState = Exclude<RecordState, ApprovalState>;

/** What the store keeps about one idempotency key. */
export interface IdempotencyRecord {
  /** The idempotency key: lowercase hex SHA-256. */
  readonly key: string;
  readonly tenant: string;
  /** Name of the tool that claimed the key. */
  readonly tool: string;
  /** SHA-256 of the canonical arguments of the call that claimed the key. */
  readonly fingerprint: string;
  readonly state: RecordState;
  /** Fencing token of the current (or last) attempt; starts at 1, +1 on every takeover. */
  readonly fence: number;
  /** Attempt number of the current (or last) attempt; starts at 1. */
  readonly attempt: number;
  /** Opaque id of the holder of the current attempt. */
  readonly owner: string;
  /** Lease deadline (epoch ms, store clock). Meaningful while `in_progress`. */
  readonly leaseExpiresAtMs: number;
  /** Retention deadline (epoch ms, store clock): the record is gone after it. */
  readonly expiresAtMs: number;
  /**
   * The retention window (ms) the call was claimed with (`ClaimOptions.retentionMs`): how long
   * the record is kept once it settles. An operator's resolution keeps it unless the operator
   * gives another. Reported by `get` and `claim` on every store of this repository;
   * optional for stores written before it.
   */
  readonly retentionMs?: number;
  /**
   * The name of the codec of the guard whose claim created this life of the record (`json` for
   * the default): outcomes of it, the call's own and an operator's, must be encoded with it. An
   * operator tool that encodes otherwise refuses before writing. A guard whose codec
   * has no name records `custom` (`OutcomeCodec.name`); absent on records written before it
   * existed, or by a store that does not keep it.
   */
  readonly codec?: string;
  /** The recorded outcome, as encoded by the guard's codec. Present when `completed`. */
  readonly outcome?: string;
  /** Why the outcome is unknown (`indeterminate`) or the call was given up (`abandoned`). */
  readonly error?: RecordedError;
  /** The agent run of the call that claimed the key (`GuardedCall.runId`), when it had one. */
  readonly runId?: string;
  /** The SDK's tool call id of the call that claimed the key, when it had one. */
  readonly callId?: string;
  /**
   * The policy's human description of the call (`describe(args)`, e.g. `refund A-100 EUR 30`):
   * the one place where text derived from the arguments is stored, opt-in, at most
   * `MAX_DESCRIPTION_LENGTH` code units. Absent unless the policy has `describe`.
   */
  readonly description?: string;
  /** When the current attempt claimed the key (epoch ms, store clock). */
  readonly claimedAtMs?: number;
  /**
   * When the record entered its current state (epoch ms, store clock): the claim for
   * `in_progress`, the settlement for the others. Listing orders by it.
   */
  readonly updatedAtMs?: number;
  /** The operator resolution that completed this record, when an operator did (`resolve`). */
  readonly resolution?: ResolutionEntry;
  /**
   * The operator's decision on this call (`decideApproval`), when it needed one: present on `approved` and
   * `denied` records, and kept on the record the claim that consumed the approval made.
   */
  readonly approval?: ApprovalEntry;
}

/** An error as recorded: its type name and message only (never a stack or arguments). */
export interface RecordedError {
  /** The error's `name`, or its `code` for a plain `Error` with one (`ECONNRESET`). */
  readonly type: string;
  /**
   * For a body's error: `(message not recorded)` (with its `code` when the type does not show
   * it) unless `GuardOptions.describeError` gives a message; toolfence's own errors: their text.
   */
  readonly message: string;
}

/**
 * The holder of one attempt: its fencing token and its owner id. Operations conditioned on a
 * holder check BOTH: the fence orders attempts within one life of a record, and the owner (unique
 * per attempt) tells apart two lives of a key (a record released or expired and claimed afresh
 * starts again at fence 1, so a fence alone would let a long-stalled holder write into the new
 * life).
 */
export interface Holder {
  readonly fence: number;
  readonly owner: string;
}

/** Identifies one record. Keys are unique per tenant; every operation is scoped to a tenant. */
export interface RecordRef {
  readonly tenant: string;
  readonly key: string;
}

/**
 * What a claimer does with a holder whose lease expired:
 * - `at-least-once` (IDEMPOTENT): take the call over with fence + 1 and attempt + 1, or mark the
 *   record `abandoned` once `maxAttempts` attempts were lost.
 * - `at-most-once` (EFFECTFUL): never re-run; mark the record `indeterminate`.
 */
export type TakeoverMode = 'at-least-once' | 'at-most-once';

export interface ClaimOptions {
  /** Tool name, recorded and checked on reuse. */
  readonly tool: string;
  /** SHA-256 of the canonical arguments. */
  readonly fingerprint: string;
  /** Opaque id of this claimer (unique per attempt). */
  readonly owner: string;
  /** Lease length in milliseconds (> 0). */
  readonly leaseMs: number;
  /** Retention window in milliseconds (>= leaseMs), counted from when the record settles. */
  readonly retentionMs: number;
  readonly mode: TakeoverMode;
  /** Most attempts an `at-least-once` call may have (>= 1). */
  readonly maxAttempts: number;
  /** The agent run the call belongs to; recorded for operators (never part of a decision). */
  readonly runId?: string;
  /** The SDK's tool call id; recorded for operators (never part of a decision). */
  readonly callId?: string;
  /** The policy's human description of the call; recorded for operators (see `IdempotencyRecord`). */
  readonly description?: string;
  /** The name of the guard's codec (`OutcomeCodec.name`); recorded for operators (see `IdempotencyRecord.codec`). */
  readonly codec?: string;
  /**
   * When true, a record with another tool or another fingerprint is a `conflict`, reported before
   * any other state (business keys and `'call'` keys). When false only the tool is checked.
   */
  readonly checkFingerprint: boolean;
  /**
   * `'required'`: the call runs only on an operator's approval of this tool and fingerprint
   * (`decideApproval`). No live record → an `awaiting_approval` record is written and the answer is
   * `approval_required`; an `approved` one is consumed by this claim (`acquired`, fence 1). The
   * approval states answer alike without it (docs/store-contract.md, "Approvals").
   */
  readonly approval?: 'required';
}

/** Answer of {@link IdempotencyStore.claim}, decided in the same atomic step as the claim. */
export type ClaimResult =
  | {
      /** The caller now holds the key and must run the body. */
      readonly status: 'acquired';
      readonly fence: number;
      readonly attempt: number;
      readonly leaseExpiresAtMs: number;
      /** True when this claim took over from a holder whose lease had expired. */
      readonly takeover: boolean;
      /**
       * The operator's approval this claim consumed (it read `approved`), when it did. Optional:
       * a store may leave it out (the record keeps it either way); the guard reports it.
       */
      readonly approval?: ApprovalEntry;
    }
  | { readonly status: 'completed'; readonly record: IdempotencyRecord }
  | {
      /** Another holder has a live lease. */
      readonly status: 'busy';
      readonly record: IdempotencyRecord;
      /** The store's clock when it answered (epoch ms), to judge `record.leaseExpiresAtMs`. */
      readonly nowMs: number;
    }
  | { readonly status: 'indeterminate'; readonly record: IdempotencyRecord }
  | { readonly status: 'abandoned'; readonly record: IdempotencyRecord }
  | {
      /** The key is held with another tool or other arguments (see `checkFingerprint`). */
      readonly status: 'conflict';
      readonly record: IdempotencyRecord;
    }
  | {
      /**
       * The call waits for an operator's decision: the record is `awaiting_approval` (this claim
       * wrote it, or found it). Nothing ran; ask again after `decideApproval`.
       */
      readonly status: 'approval_required';
      readonly record: IdempotencyRecord;
    }
  | {
      /** An operator denied this call (`record.approval` says who and why). Nothing ran. */
      readonly status: 'denied';
      readonly record: IdempotencyRecord;
    };

export type RenewResult =
  | { readonly status: 'renewed'; readonly leaseExpiresAtMs: number }
  /** The fence is no longer current, or the record settled or disappeared. */
  | { readonly status: 'lost'; readonly reason: 'stale' | 'settled' | 'not_found' };

export type CompleteResult =
  | { readonly status: 'completed' }
  /** The fence was superseded (or the record settled otherwise); nothing changed. */
  | { readonly status: 'stale'; readonly record: IdempotencyRecord }
  | { readonly status: 'not_found' };

export type ReleaseResult =
  | { readonly status: 'released' }
  | { readonly status: 'stale'; readonly record: IdempotencyRecord }
  | { readonly status: 'not_found' };

export type MarkIndeterminateResult =
  | { readonly status: 'marked' }
  | { readonly status: 'stale'; readonly record: IdempotencyRecord }
  | { readonly status: 'not_found' };

/** Who settled a record and why, kept with every operator resolution. */
export interface ResolutionAudit {
  /** The operator (a user id, an email): at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, in the operator's words: at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
}

/**
 * The record an operator's resolution is about: the holder of the attempt the operator looked at
 * (read with `get` or `list`). Without it a resolution settles whatever record is under the key
 * when it runs, which, after a release (or the retention window) and a new claim, may be another
 * call in a new life of the key (fence 1 again, another owner) that the operator never saw.
 */
export interface ResolutionCondition {
  /**
   * Resolve only if the record's `fence` AND `owner` are these (compared in the same atomic step
   * as the state check); otherwise nothing changes and the answer is `changed`. Optional in the
   * contract (`v1` callers), passed by every caller in this repository: `guard.resolve` (the holder
   * it read, or the one given), the CLI and the console.
   */
  readonly expect?: Holder;
}

/**
 * Settling a record whose holder's lease is still live (its body may still take effect): refused
 * (`holder_alive`) unless forced, with a reason that is kept in the resolution entry.
 */
export interface ResolutionForce {
  /**
   * Resolve even an `in_progress` record whose lease is live by the store's clock (the body may
   * still be running: "two refunds"). Requires `reason`; the entry says `forced: true`.
   */
  readonly force?: true;
}

/**
 * How an operator settles an `indeterminate` or `abandoned` record, or an `in_progress` one whose
 * holder's lease expired (its holder is gone) or, with `force`, is still live.
 */
export type Resolution =
  /** The effect happened; this is its outcome (encoded by the guard's codec). */
  | ({ readonly outcome: string } & ResolutionAudit & ResolutionCondition & ResolutionForce)
  /** The effect did not happen; delete the record so the call may run again. */
  | ({ readonly released: true } & ResolutionAudit & ResolutionCondition & ResolutionForce);

/**
 * One operator resolution, as the store keeps it (written in the same atomic step as the
 * resolution itself, kept for the retention window the resolution was given, also after a
 * `released` resolution deleted the record). Never holds the outcome or the arguments.
 */
export interface ResolutionEntry {
  readonly key: string;
  readonly tenant: string;
  readonly tool: string;
  /** `completed`: the operator stated the outcome; `released`: the key was freed to run again. */
  readonly action: 'completed' | 'released';
  /**
   * The state the record was in when it was resolved: `in_progress` when its holder's lease had
   * expired, or was live and the resolution was forced (`forced`).
   */
  readonly fromState: 'indeterminate' | 'abandoned' | 'in_progress';
  /** Fence and attempt of the record when it was resolved. */
  readonly fence: number;
  readonly attempt: number;
  /** The recorded error of the record when it was resolved. */
  readonly error?: RecordedError;
  readonly by?: string;
  readonly reason?: string;
  /** Present (true) when the holder's lease was live and the operator forced the resolution. */
  readonly forced?: true;
  /** When it was resolved (epoch ms, store clock). */
  readonly atMs: number;
}

/**
 * What `list` can select. `lease_expired` is an `in_progress` record whose lease has expired by
 * the store's clock (a holder that stopped; the next claim will take it over or mark it);
 * `in_progress` is every record in progress, live or not; the approval states select themselves
 * (never listed unless asked for).
 */
export type ListState =
  | 'indeterminate'
  | 'abandoned'
  | 'lease_expired'
  | 'in_progress'
  | 'completed'
  | ApprovalState;

/** Options of {@link IdempotencyStore.list}. */
export interface ListOptions {
  /** The tenant to list. Required unless `allTenants` is true (listing never crosses tenants unasked). */
  readonly tenant?: string;
  /** List every tenant's records. Refused together with `tenant`. */
  readonly allTenants?: boolean;
  /** Which states; default `OPERATOR_STATES` (store-input.ts): indeterminate, abandoned, lease_expired. */
  readonly states?: readonly ListState[];
  /** Only records of this tool. */
  readonly tool?: string;
  /** Only records that entered their state at least this many ms ago (store clock), `>= 0`. */
  readonly olderThanMs?: number;
  /** By `updatedAtMs`, then tenant, then key: `'oldest'` (default) or `'newest'` first. */
  readonly order?: 'oldest' | 'newest';
  /** Most records in one page, `1..MAX_LIST_LIMIT`. */
  readonly limit: number;
  /** The `cursor` of the previous page, with the same other options. */
  readonly cursor?: string;
}

/** A listed record: everything but the outcome (read it with `get`). */
export type ListedRecord = Omit<IdempotencyRecord, 'outcome'>;

/** One page of {@link IdempotencyStore.list}. */
export interface ListPage {
  readonly records: readonly ListedRecord[];
  /**
   * Pass it back for the next page; absent on the last page. A page may hold fewer than `limit`
   * records while a cursor is still present.
   */
  readonly cursor?: string;
  /** The store's clock when it answered (epoch ms), to judge leases. */
  readonly nowMs: number;
}

/**
 * Answer of {@link IdempotencyStore.resolve}, decided in the same atomic step as the resolution.
 * The checks run in this order: the record exists, then its holder (when `expect` is given), then
 * its state, then (`in_progress`) its lease.
 */
export type ResolveResult =
  | { readonly status: 'resolved' }
  /** No live record (released, or past retention); nothing changed. */
  | { readonly status: 'not_found' }
  /**
   * `expect` was given and the record's holder is another one (another attempt, or another life
   * of the key: released or expired, then claimed afresh); nothing changed. `record` is the one
   * now under the key.
   */
  | { readonly status: 'changed'; readonly record: IdempotencyRecord }
  /** A `completed` record cannot be resolved; nothing changed. */
  | { readonly status: 'not_resolvable'; readonly record: IdempotencyRecord }
  /**
   * The record is `in_progress` and its holder's lease is live by the store's clock: its body may
   * still take effect, so it is not settled unless `force` is given; nothing changed.
   */
  | { readonly status: 'holder_alive'; readonly record: IdempotencyRecord };

export type WaitResult =
  /** The record left `in_progress` (completed, indeterminate, abandoned) or was deleted. */
  | 'settled'
  /** The holder's lease expired: claim again to take over (or mark indeterminate). */
  | 'lease_expired'
  /** Neither happened within `timeoutMs`. */
  | 'timeout';

export interface WaitOptions {
  /** Longest wait in milliseconds. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}
