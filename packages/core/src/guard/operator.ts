// The guard's operator side: settle a record with an audit (who, why) and a `tool.resolved`
// event, list records by state, read a key's resolution history. Guard methods delegate here.
import { HolderAliveError } from '../errors/holder-alive-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import { RECONCILE_TOOL } from '../policy/reconcile-policy.js';
import { isApprovalState } from '../store/approval-decisions.js';
import type {
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  RecordRef,
  Resolution,
  ResolutionEntry,
  ResolveResult,
} from '../store/idempotency-store.js';
import {
  checkHolder,
  checkListOptions,
  checkResolutionAudit,
  checkResolutionForce,
  checkRetentionMs,
  resolutionApplies,
} from '../store/store-input.js';
import { untraced } from '../telemetry/traced-store.js';
import type { GuardRuntime } from './guard-runtime.js';

/** How an operator settles an indeterminate or abandoned record. */
export type OperatorResolution =
  /** The effect happened; record this outcome (encoded by the guard's codec). */
  | { readonly outcome: unknown }
  /** The effect did not happen; free the key so the call may run again. */
  | { readonly released: true };

/** Options of `guard.resolve`. */
export interface ResolveOptions {
  /** The record's tenant. Default: the guard's. */
  readonly tenant?: string;
  /**
   * How long the settled record (and the resolution entry) is kept, in ms. Default: the retention
   * the call was claimed with (`record.retentionMs`, its policy's), else the guard's default
   * retention for a store that does not report it ("it happened" kept for the guard's
   * 1 day instead of the policy's 7 let a run resumed on day 2 run the call again).
   */
  readonly retentionMs?: number;
  /** Who resolved it (a user id, an email), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, in the operator's words, at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
  /**
   * The holder (`{ fence, owner }`) of the record the operator looked at, e.g. from an earlier
   * `guard.list` or `inspect`: the record is resolved only if it still has this holder, in the
   * store's atomic step (else `changed`, nothing written). Default: the holder of the record the
   * guard reads just before resolving, which closes the window inside this one call only; pass it
   * to close the window between the operator's look and the decision.
   */
  readonly expect?: Holder;
  /**
   * Settle the record even if its holder is alive (`in_progress`, lease live by the store's
   * clock: its body may still take effect), which is otherwise refused with `HolderAliveError`.
   * `reason` (required, at most `MAX_REASON_LENGTH` code units) is kept as the resolution's
   * reason, replacing `options.reason`, and the entry says `forced: true`. Only for a holder known
   * to be stuck: a body that later completes finds its record settled.
   */
  readonly force?: { readonly reason: string };
}

/** The store resolution of an operator's decision, checked before any I/O. @throws TypeError, StoreInputError */
export function storeResolutionOf(
  runtime: GuardRuntime,
  resolution: OperatorResolution,
  options: ResolveOptions,
): Resolution {
  const released =
    resolution !== null && typeof resolution === 'object' && Object.hasOwn(resolution, 'released');
  const withOutcome =
    resolution !== null && typeof resolution === 'object' && Object.hasOwn(resolution, 'outcome');
  if (released === withOutcome || (released && (resolution as { released: unknown }).released !== true)) {
    throw new TypeError(
      'guard.resolve needs either { outcome } (it happened) or { released: true } (it did not)',
    );
  }
  const force = options.force;
  if (
    force !== undefined &&
    (force === null || typeof force !== 'object' || typeof force.reason !== 'string')
  ) {
    throw new TypeError('guard.resolve: force must be { reason } (why the live holder is overridden)');
  }
  const reason = force?.reason ?? options.reason;
  const audit = {
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(reason === undefined ? {} : { reason }),
  };
  checkResolutionAudit(audit);
  const condition = {
    ...(options.expect === undefined ? {} : { expect: holderOf(options.expect) }),
    ...(force === undefined ? {} : { force: true as const }),
  };
  checkResolutionForce({ ...audit, ...condition });
  if (released) return { released: true, ...audit, ...condition };
  const outcome = runtime.encodeOutcome((resolution as { outcome: unknown }).outcome, undefined);
  return { outcome, ...audit, ...condition };
}

/** A copy of `holder` with its two fields only, checked. @throws StoreInputError */
function holderOf(holder: Holder): Holder {
  checkHolder(holder);
  return { fence: holder.fence, owner: holder.owner };
}

/**
 * Read the record, then resolve it on the condition that it still has the holder read (or
 * `resolution.expect`, which must be the one read), and when it did, emit `tool.resolved` with
 * the record as read: the event's record and the settled record are the same attempt. The
 * decision itself is the store's one atomic step; what the read already tells (no record, another
 * holder, a completed record) is answered without writing. Whether an `in_progress` holder's lease
 * is live is the store's to judge, on its clock, in that step.
 * The retention: `retention.givenMs` when the operator gave one, else the record's own
 * (`retentionMs`, the one its call was claimed with), else `retention.fallbackMs`; `onRetention`
 * hears which was used before the write. `sameClaim`: resolve only a record claimed at that time
 * (`claimedAtMs`), read just before the conditional resolve.
 * @throws HolderAliveError the holder's lease is live and the resolution was not forced (nothing changed)
 * @throws StoreUnavailableError, StoreInputError
 */
export async function resolveRecord(
  runtime: GuardRuntime,
  ref: RecordRef,
  resolution: Resolution,
  retention: RetentionChoice,
  sameClaim?: Pick<IdempotencyRecord, 'claimedAtMs'>,
): Promise<ResolveResult> {
  if (retention.givenMs !== undefined) checkRetentionMs(retention.givenMs);
  const before: IdempotencyRecord | null = await runtime.storeCall('get', () => runtime.store.get(ref));
  if (before === null) return { status: 'not_found' };
  // A claim resent with its owner after its first life ended starts a life with the same holder;
  // its claim time tells them apart (a reconcile probe's verdict is about the life it read).
  if (sameClaim !== undefined && before.claimedAtMs !== sameClaim.claimedAtMs) {
    return { status: 'changed', record: before };
  }
  const kept = keptRetention(before, retention);
  const expect = resolution.expect ?? { fence: before.fence, owner: before.owner };
  if (!resolutionApplies(before, { expect })) return { status: 'changed', record: before };
  // A record before its claim has no attempt to settle: an operator decides it (approve or deny).
  if (before.state === 'completed' || isApprovalState(before.state)) {
    return { status: 'not_resolvable', record: before };
  }
  if ('outcome' in resolution) checkCodec(runtime, before);
  const result = await runtime.storeCall('resolve', () =>
    runtime.store.resolve(ref, { ...resolution, expect }, kept.retentionMs),
  );
  if (result.status === 'holder_alive') {
    const { record } = result;
    throw new HolderAliveError({
      key: record.key,
      tenant: record.tenant,
      tool: record.tool,
      fence: record.fence,
      owner: record.owner,
      leaseExpiresAtMs: record.leaseExpiresAtMs,
      ...(record.claimedAtMs === undefined ? {} : { claimedAtMs: record.claimedAtMs }),
    });
  }
  if (result.status === 'resolved') {
    runtime.emitOperator('tool.resolved', ref, before, {
      resolution: {
        action: 'outcome' in resolution ? 'completed' : 'released',
        retentionMs: kept.retentionMs,
        retentionFrom: kept.from,
        ...(resolution.force === true ? { forced: true } : {}),
        ...(resolution.by === undefined ? {} : { by: resolution.by }),
        ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
      },
    });
  }
  return result;
}

/**
 * An outcome is written only with the codec that wrote the record's life: a guard on
 * another codec (the CLI's JSON, a console given no guard) would leave an outcome the application
 * cannot read, an `OutcomeEncodingError` on every replay for the whole retention. Records of
 * stores or guards that say nothing about their codec are taken as they were.
 * @throws OutcomeEncodingError nothing written
 */
function checkCodec(runtime: GuardRuntime, record: IdempotencyRecord): void {
  const recorded = record.codec;
  if (recorded === undefined || recorded === runtime.codecName) return;
  throw new OutcomeEncodingError(
    'encode',
    `the record was written with the codec "${recorded}" and this guard encodes with "${runtime.codecName}": ` +
      'the application could not read this outcome, so nothing was written. Resolve it with the ' +
      `application's own Guard (guard.resolve(key, { outcome }), which encodes with "${recorded}"), or in the ` +
      "console mounted in the application (createConsoleHandler({ guard }) with the application's guard). " +
      'A release (the call did not happen) needs no codec.',
    { tool: record.tool },
  );
}

/** Where the retention of a resolution comes from: the operator, the call's claim, or the guard. */
export interface RetentionChoice {
  /** The operator's own (`ResolveOptions.retentionMs`). */
  readonly givenMs: number | undefined;
  /** The guard's default, for a record whose store does not report the call's retention. */
  readonly fallbackMs: number;
}

/** The retention a resolution keeps the record for, and whose it is. */
export function keptRetention(
  record: Pick<IdempotencyRecord, 'retentionMs'>,
  retention: RetentionChoice,
): { readonly retentionMs: number; readonly from: 'operator' | 'call' | 'guard' } {
  if (retention.givenMs !== undefined) return { retentionMs: retention.givenMs, from: 'operator' };
  const claimed = record.retentionMs;
  // A store's value is only trusted when it is one a store could have been given.
  if (typeof claimed === 'number' && Number.isSafeInteger(claimed) && claimed > 0) {
    return { retentionMs: claimed, from: 'call' };
  }
  return { retentionMs: retention.fallbackMs, from: 'guard' };
}

/** @throws StoreConfigurationError when the store has no `list`; StoreInputError; StoreUnavailableError */
export async function listRecords(runtime: GuardRuntime, options: ListOptions): Promise<ListPage> {
  checkListOptions(options);
  const { store } = runtime;
  if (store.list === undefined)
    throw new StoreConfigurationError(storeName(store), 'it has no list operation');
  const page = await runtime.storeCall('list', () =>
    (store.list as NonNullable<typeof store.list>).call(store, options),
  );
  // A reconcile probe's own lease is no call: operators never see it (a page may hold fewer than
  // `limit` records while a cursor is present, as the contract allows).
  if (!page.records.some((record) => record.tool === RECONCILE_TOOL)) return page;
  return { ...page, records: page.records.filter((record) => record.tool !== RECONCILE_TOOL) };
}

/** @throws StoreConfigurationError when the store keeps no resolutions; StoreUnavailableError */
export async function resolutionsOf(
  runtime: GuardRuntime,
  ref: RecordRef,
): Promise<readonly ResolutionEntry[]> {
  const { store } = runtime;
  if (store.resolutions === undefined) {
    throw new StoreConfigurationError(storeName(store), 'it has no resolutions operation');
  }
  return runtime.storeCall('resolutions', () =>
    (store.resolutions as NonNullable<typeof store.resolutions>).call(store, ref),
  );
}

/** The user's store class, also when the guard times it for telemetry (a TracedStore around it). */
function storeName(store: IdempotencyStore): string {
  return untraced(store).constructor?.name ?? 'the store';
}
