// What a conformance case body gets (CaseContext: its store and peers, fresh tenants and keys,
// claim options, the suite's timings), and how a case is defined (defineCase).
import { randomBytes } from 'node:crypto';
import type {
  ClaimOptions,
  ClaimResult,
  Holder,
  IdempotencyStore,
  RecordRef,
} from '../../store/idempotency-store.js';
import { fail, show } from '../check.js';
import type { StoreConformanceOptions } from './options.js';

export interface Stores {
  readonly store: IdempotencyStore;
  readonly peers: readonly IdempotencyStore[];
}

export const DAY_MS = 86_400_000;
export const LONG_LEASE_MS = 60_000;
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/**
 * Runs `check` only while less than `windowMs` has passed since `sentAtMs` (performance.now()
 * taken before the operation that set a deadline `windowMs` ahead was sent): a stalled test
 * process (GC, a loaded machine) then skips a "still live" check instead of failing a correct
 * store. The store's deadline is set no earlier than the send, so the check is always sound.
 */
export async function whileWithin(
  sentAtMs: number,
  windowMs: number,
  check: () => Promise<void>,
): Promise<void> {
  if (performance.now() - sentAtMs < windowMs - 2) await check();
}
/**
 * Runs `body` on every item, `size` at a time (concurrently within a batch, batch after batch):
 * a case checking an unbounded list (every loser of a race) stays within what a small
 * connection pool serves before the store's operation timeout. `index` is the item's position in
 * `items`. Rejects with the first failure of a batch, after that batch has settled.
 */
export async function inBatches<T>(
  items: readonly T[],
  size: number,
  body: (item: T, index: number) => Promise<void>,
): Promise<void> {
  const step = Math.max(1, Math.floor(size));
  for (let start = 0; start < items.length; start += step) {
    const batch = items.slice(start, start + step);
    const results = await Promise.allSettled(batch.map((item, offset) => body(item, start + offset)));
    const failed = results.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw (failed as PromiseRejectedResult).reason;
  }
}
export const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export type Acquired = Extract<ClaimResult, { status: 'acquired' }>;

/** What a case body gets. */
export class CaseContext {
  readonly tenants: string[] = [];
  readonly leaseMs: number;
  /** Sleep after which a lease of `leaseMs` has certainly expired. */
  readonly expireMs: number;
  /** Timeout of a wait that must be woken by an event well before it. */
  readonly wakeTimeoutMs: number;
  readonly rounds: number;
  readonly racers: number;
  constructor(
    readonly stores: Stores,
    options: StoreConformanceOptions,
  ) {
    this.leaseMs = options.leaseMs ?? 150;
    this.expireMs = this.leaseMs + Math.max(25, Math.round(this.leaseMs / 3));
    this.wakeTimeoutMs = Math.max(1_000, this.leaseMs * 25);
    this.rounds = options.raceRounds ?? 10;
    this.racers = options.racers ?? 10;
  }
  get store(): IdempotencyStore {
    return this.stores.store;
  }
  /** Racer `index`'s store: the store and its peers in turn. */
  racer(index: number): IdempotencyStore {
    const all = [this.stores.store, ...this.stores.peers];
    return all[index % all.length] as IdempotencyStore;
  }
  tenant(): string {
    const tenant = `conformance-${hex(8)}`;
    this.tenants.push(tenant);
    return tenant;
  }
  ref(): RecordRef {
    return { tenant: this.tenant(), key: hex(32) };
  }
  options(overrides: Partial<ClaimOptions> = {}): ClaimOptions {
    return {
      tool: 'refund',
      fingerprint: 'f'.repeat(64),
      owner: `owner-${hex(6)}`,
      leaseMs: 30_000,
      retentionMs: DAY_MS,
      mode: 'at-least-once',
      maxAttempts: 3,
      checkFingerprint: false,
      ...overrides,
    };
  }
  async acquire(
    ref: RecordRef,
    overrides: Partial<ClaimOptions> = {},
    on: IdempotencyStore = this.store,
  ): Promise<{ holder: Holder; result: Acquired; opts: ClaimOptions }> {
    const opts = this.options(overrides);
    const result = await on.claim(ref, opts);
    if (result.status !== 'acquired') fail(`a claim of a free key should be acquired, got ${show(result)}`);
    return { holder: { fence: result.fence, owner: opts.owner }, result, opts };
  }
  /** `count` rounds at once, each labelled in its failure. */
  async inRounds(body: (round: number) => Promise<void>, count = this.rounds): Promise<void> {
    const results = await Promise.allSettled(Array.from({ length: count }, (_, round) => body(round)));
    const failed = results.findIndex((result) => result.status === 'rejected');
    if (failed >= 0) {
      const reason = (results[failed] as PromiseRejectedResult).reason as unknown;
      if (reason instanceof Error) reason.message = `round ${failed}: ${reason.message}`;
      throw reason;
    }
  }
}

/** One case of a topic file: its name, its bound on a healthy store, its body. */
export interface CaseDefinition {
  readonly name: string;
  readonly timeoutMs: number;
  run(context: CaseContext): Promise<void>;
}

/** A case whose body gets a {@link CaseContext}; `timeoutMs` defaults to 30 s. */
export function defineCase(
  name: string,
  run: (context: CaseContext) => Promise<void>,
  timeoutMs = 30_000,
): CaseDefinition {
  return { name, timeoutMs, run };
}
