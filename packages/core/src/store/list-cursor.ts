/**
 * What every store shares to answer `list` alike (docs/store-contract.md, "Listing"): the order
 * of a page (by `updatedAtMs`, then tenant, then key), the opaque cursor that names the last
 * record of a page, and the filter of a record against the options.
 */
import { StoreInputError } from '../errors/store-input-error.js';
import type { IdempotencyRecord, ListedRecord, ListOptions, ListState } from './idempotency-store.js';
import { OPERATOR_STATES } from './store-input.js';

/** Where a page ended: the sort position of its last record. */
export interface ListPosition {
  readonly updatedAtMs: number;
  readonly tenant: string;
  readonly key: string;
}

const CURSOR_VERSION = 1;

/** The cursor after `position` for pages in `order` (base64url of a small JSON array). */
export function encodeListCursor(position: ListPosition, order: 'oldest' | 'newest'): string {
  const text = JSON.stringify([CURSOR_VERSION, order, position.updatedAtMs, position.tenant, position.key]);
  return Buffer.from(text, 'utf8').toString('base64url');
}

/**
 * The position a cursor names. @throws StoreInputError when it was not made by
 * {@link encodeListCursor} for the same order.
 */
export function decodeListCursor(cursor: string, order: 'oldest' | 'newest'): ListPosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new StoreInputError('cursor', 'is not a cursor returned by list');
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 5 ||
    parsed[0] !== CURSOR_VERSION ||
    !Number.isSafeInteger(parsed[2]) ||
    typeof parsed[3] !== 'string' ||
    typeof parsed[4] !== 'string'
  ) {
    throw new StoreInputError('cursor', 'is not a cursor returned by list');
  }
  if (parsed[1] !== order) {
    throw new StoreInputError('cursor', `was made for order '${String(parsed[1])}', not '${order}'`);
  }
  return { updatedAtMs: parsed[2], tenant: parsed[3], key: parsed[4] };
}

/** Ascending sort order of listed records: `updatedAtMs`, then tenant, then key (code units). */
export function compareListPositions(a: ListPosition, b: ListPosition): number {
  if (a.updatedAtMs !== b.updatedAtMs) return a.updatedAtMs < b.updatedAtMs ? -1 : 1;
  if (a.tenant !== b.tenant) return a.tenant < b.tenant ? -1 : 1;
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  return 0;
}

/** The states a listing selects (`OPERATOR_STATES` when none are given). */
export function listedStates(options: ListOptions): ReadonlySet<ListState> {
  return new Set(options.states ?? OPERATOR_STATES);
}

/** The state a record is listed under: `lease_expired` for an in-progress record past its lease. */
export function listStateOf(record: IdempotencyRecord | ListedRecord, nowMs: number): ListState {
  if (record.state === 'in_progress' && record.leaseExpiresAtMs <= nowMs) return 'lease_expired';
  return record.state;
}

/** Whether a state is selected: `in_progress` selects live and expired leases alike. */
export function stateSelected(states: ReadonlySet<ListState>, listState: ListState): boolean {
  if (states.has(listState)) return true;
  return listState === 'lease_expired' && states.has('in_progress');
}

/** True when a live record is on the page the options describe (position and tenant excepted). */
export function recordMatches(
  record: IdempotencyRecord | ListedRecord,
  options: ListOptions,
  states: ReadonlySet<ListState>,
  nowMs: number,
): boolean {
  if (!stateSelected(states, listStateOf(record, nowMs))) return false;
  if (options.tool !== undefined && record.tool !== options.tool) return false;
  if (options.olderThanMs !== undefined && (record.updatedAtMs ?? 0) > nowMs - options.olderThanMs) {
    return false;
  }
  return true;
}

/** True when `position` comes after the cursor's in the page order. */
export function afterCursor(
  position: ListPosition,
  cursor: ListPosition | undefined,
  order: 'oldest' | 'newest',
): boolean {
  if (cursor === undefined) return true;
  const compared = compareListPositions(position, cursor);
  return order === 'oldest' ? compared > 0 : compared < 0;
}

/** A record as listed: without its outcome. */
export function listedRecordOf(record: IdempotencyRecord): ListedRecord {
  const { outcome: _outcome, ...listed } = record;
  return listed;
}
