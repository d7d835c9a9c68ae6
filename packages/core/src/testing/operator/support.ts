// What the operator cases (listing, resolutions) share: the case context they need of the suite
// and helpers that put records into each listed state.
import { randomBytes } from 'node:crypto';
import type {
  ClaimOptions,
  ClaimResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListedRecord,
  ListOptions,
  RecordRef,
} from '../../store/idempotency-store.js';
import { fail, ok, show } from '../check.js';

export const DAY_MS = 86_400_000;
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
export const hex = (bytes: number) => randomBytes(bytes).toString('hex');

type Acquired = Extract<ClaimResult, { status: 'acquired' }>;

/** What an operator case needs of the suite's case context (cases.ts). */
export interface OperatorCaseContext {
  readonly store: IdempotencyStore;
  readonly leaseMs: number;
  readonly expireMs: number;
  readonly rounds: number;
  readonly racers: number;
  racer(index: number): IdempotencyStore;
  tenant(): string;
  ref(): RecordRef;
  options(overrides?: Partial<ClaimOptions>): ClaimOptions;
  acquire(
    ref: RecordRef,
    overrides?: Partial<ClaimOptions>,
    on?: IdempotencyStore,
  ): Promise<{ holder: Holder; result: Acquired; opts: ClaimOptions }>;
}

/** Registers one case (cases.ts `add`). */
export type AddCase<C> = (name: string, body: (context: C) => Promise<void>, timeoutMs?: number) => void;

/** The store's list, refusing a store that has none. */
export function listOf(store: IdempotencyStore): NonNullable<IdempotencyStore['list']> {
  if (typeof store.list !== 'function')
    fail('the store has no list operation (docs/store-contract.md, "Listing")');
  return store.list.bind(store);
}

/** The store's resolutions, refusing a store that has none. */
export function resolutionsOf(store: IdempotencyStore): NonNullable<IdempotencyStore['resolutions']> {
  if (typeof store.resolutions !== 'function') fail('the store has no resolutions operation');
  return store.resolutions.bind(store);
}

/** Every page of a listing, checking each page's size and that no record holds an outcome. */
export async function listAll(
  store: IdempotencyStore,
  options: ListOptions,
  label: string,
): Promise<ListedRecord[]> {
  const list = listOf(store);
  const all: ListedRecord[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const result = await list(cursor === undefined ? options : { ...options, cursor });
    ok(result.records.length <= options.limit, `${label}: a page of ${result.records.length} > limit`);
    ok(Number.isSafeInteger(result.nowMs), `${label}: nowMs ${show(result.nowMs)}`);
    for (const record of result.records) {
      ok(!('outcome' in record), `${label}: a listed record holds an outcome: ${show(record)}`);
      ok(!('arguments' in record), `${label}: a listed record holds arguments`);
      all.push(record);
    }
    if (result.cursor === undefined) return all;
    ok(typeof result.cursor === 'string' && result.cursor !== '', `${label}: cursor ${show(result.cursor)}`);
    cursor = result.cursor;
  }
  return fail(`${label}: more than 1000 pages`);
}

/** `(key)` of each record, in order. */
export const keysOf = (records: readonly { key: string }[]) => records.map((record) => record.key);

/** Sorted as list orders them, oldest first. */
export function inListOrder<T extends { updatedAtMs?: number; tenant: string; key: string }>(
  records: T[],
): T[] {
  return [...records].sort((a, b) => {
    const ua = a.updatedAtMs ?? 0;
    const ub = b.updatedAtMs ?? 0;
    if (ua !== ub) return ua - ub;
    if (a.tenant !== b.tenant) return a.tenant < b.tenant ? -1 : 1;
    return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
  });
}

/** A record made `indeterminate` (its holder marked it), with its holder. */
export async function indeterminate(
  c: OperatorCaseContext,
  ref: RecordRef,
  overrides: Partial<ClaimOptions> = {},
): Promise<Holder> {
  const { holder } = await c.acquire(ref, { mode: 'at-most-once', ...overrides });
  const marked = await c.store.markIndeterminate(
    ref,
    holder,
    { type: 'Timeout', message: 'no answer' },
    DAY_MS,
  );
  if (marked.status !== 'marked') fail(`markIndeterminate: ${show(marked)}`);
  return holder;
}

/** A completed record. */
export async function completed(
  c: OperatorCaseContext,
  ref: RecordRef,
  overrides: Partial<ClaimOptions> = {},
) {
  const { holder } = await c.acquire(ref, overrides);
  const done = await c.store.complete(ref, holder, '{"secret":"outcome"}', DAY_MS);
  if (done.status !== 'completed') fail(`complete: ${show(done)}`);
}

/** The record `get` reads, without its outcome (what list must give for it). */
export async function truthOf(store: IdempotencyStore, ref: RecordRef): Promise<ListedRecord | null> {
  const record: IdempotencyRecord | null = await store.get(ref);
  if (record === null) return null;
  const { outcome: _outcome, ...listed } = record;
  return listed;
}
