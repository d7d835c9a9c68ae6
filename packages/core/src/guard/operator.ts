// The guard's operator side: settle a record with an audit (who, why) and a `tool.resolved`
// event, list records by state, read a key's resolution history. Guard methods delegate here.
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import type {
  IdempotencyRecord,
  ListOptions,
  ListPage,
  RecordRef,
  Resolution,
  ResolutionEntry,
  ResolveResult,
} from '../store/idempotency-store.js';
import { checkListOptions, checkResolutionAudit, checkRetentionMs } from '../store/store-input.js';
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
  /** How long the settled record (and the resolution entry) is kept. Default: the guard's retention. */
  readonly retentionMs?: number;
  /** Who resolved it (a user id, an email), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, in the operator's words, at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
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
  const audit = {
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  };
  checkResolutionAudit(audit);
  if (released) return { released: true, ...audit };
  const outcome = runtime.encodeOutcome((resolution as { outcome: unknown }).outcome, undefined);
  return { outcome, ...audit };
}

/**
 * Resolve and, when it did, emit `tool.resolved` with the record as it was (read just before:
 * the event's tool, attempt and fence; the decision itself is the store's one atomic step).
 * @throws StoreUnavailableError, StoreInputError
 */
export async function resolveRecord(
  runtime: GuardRuntime,
  ref: RecordRef,
  resolution: Resolution,
  retentionMs: number,
): Promise<ResolveResult> {
  checkRetentionMs(retentionMs);
  const before: IdempotencyRecord | null = await runtime.storeCall('get', () => runtime.store.get(ref));
  const result = await runtime.storeCall('resolve', () =>
    runtime.store.resolve(ref, resolution, retentionMs),
  );
  if (result.status === 'resolved') {
    runtime.emitOperator('tool.resolved', ref, before, {
      resolution: {
        action: 'outcome' in resolution ? 'completed' : 'released',
        ...(resolution.by === undefined ? {} : { by: resolution.by }),
        ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
      },
    });
  }
  return result;
}

/** @throws StoreConfigurationError when the store has no `list`; StoreInputError; StoreUnavailableError */
export async function listRecords(runtime: GuardRuntime, options: ListOptions): Promise<ListPage> {
  checkListOptions(options);
  const { store } = runtime;
  if (store.list === undefined)
    throw new StoreConfigurationError(storeName(store), 'it has no list operation');
  return runtime.storeCall('list', () => (store.list as NonNullable<typeof store.list>).call(store, options));
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

function storeName(store: object): string {
  return store.constructor?.name ?? 'the store';
}
