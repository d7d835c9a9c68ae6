/**
 * The store conformance cases as plain named async functions, for any test runner. The contract
 * they check is `docs/store-contract.md` in this package (`@toolfence/core/docs/store-contract.md`).
 *
 * - {@link storeConformanceSuite}: one store (and its peers) shared by every case; call `close()`
 *   after the last case. `describeStoreConformance` (vitest, `@toolfence/core/testing`) and
 *   `registerStoreConformance` (node:test, `@toolfence/core/testing/node`) use it.
 * - {@link storeConformanceCases}: every case makes its own store (and peers) and closes it.
 *
 * Each case works under tenants of its own (random, none a prefix of another) and erases them
 * with `forget` when it ends, so the store may hold other data.
 *
 * No assertion library is imported: failures are `AssertionError`s from `node:assert`.
 */
import { randomBytes } from 'node:crypto';
import { StoreInputError } from '../errors/store-input-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import type {
  ClaimOptions,
  ClaimResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  RecordRef,
} from '../store/idempotency-store.js';
import { MAX_OUTCOME_LENGTH, MAX_RETENTION_MS, MAX_TIMER_MS } from '../store/store-input.js';
import { equal, fail, fields, ok, rejects, same, show } from './check.js';
import { addOperatorCases } from './operator/index.js';

/** Makes a store (or a peer of it). */
export type StoreFactory = () => IdempotencyStore | Promise<IdempotencyStore>;

export interface StoreConformanceOptions {
  /**
   * A store that cannot reach its backend (a closed port, a stopped server). Every operation must
   * reject with `StoreUnavailableError`. Strongly recommended: without it that case is not run.
   */
  readonly createUnavailableStore?: StoreFactory;
  /**
   * A store whose backend stops answering (a frozen server, a blackholed network path: put a TCP
   * proxy that forwards nothing in front of it) after the store connected. Every operation must
   * reject with `StoreUnavailableError` within its client-side deadline (rule S5 of
   * docs/store-contract.md). Recommended for every remote store; without it that case is not run.
   */
  readonly createFrozenStore?: StoreFactory;
  /** The frozen store's client-side deadline per operation, in milliseconds. Default 5000. */
  readonly frozenOperationTimeoutMs?: number;
  /**
   * Another store on the SAME backend through its own connection (a second client, pool or
   * instance). The race cases spread their racers over the store and {@link peerCount} peers, so
   * the operations really arrive at the backend at once from different connections. Without it
   * every racer uses the one store. Peers are closed by the suite.
   */
  readonly createPeerStore?: StoreFactory;
  /** How many peers {@link createPeerStore} makes. Default 3. */
  readonly peerCount?: number;
  /** Called once after the suite with the store, before `close()`: drop test data. */
  readonly cleanup?: (store: IdempotencyStore) => Promise<void>;
  /** Lease of the time-dependent cases, in milliseconds. Default 150. */
  readonly leaseMs?: number;
  /** Rounds of each race case (each on a fresh key, run at once). Default 10. */
  readonly raceRounds?: number;
  /** Racers in each round of a race case. Default 10. */
  readonly racers?: number;
}

/** One conformance case: run it with any test runner; it rejects when the store breaks the contract. */
export interface StoreConformanceCase {
  readonly name: string;
  /** A generous bound on how long `run` takes on a healthy store. */
  readonly timeoutMs: number;
  run(): Promise<void>;
}

/** The cases over one shared store. */
export interface StoreConformanceSuite {
  readonly cases: readonly StoreConformanceCase[];
  /** Runs `options.cleanup`, then closes the shared store and its peers (if any were made). */
  close(): Promise<void>;
}

interface Stores {
  readonly store: IdempotencyStore;
  readonly peers: readonly IdempotencyStore[];
}

interface StoreProvider {
  open(): Promise<Stores>;
  done(stores: Stores): Promise<void>;
}

const DAY_MS = 86_400_000;
const LONG_LEASE_MS = 60_000;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
/**
 * Runs `check` only while less than `windowMs` has passed since `sentAtMs` (performance.now()
 * taken before the operation that set a deadline `windowMs` ahead was sent): a stalled test
 * process (GC, a loaded machine) then skips a "still live" check instead of failing a correct
 * store. The store's deadline is set no earlier than the send, so the check is always sound.
 */
async function whileWithin(sentAtMs: number, windowMs: number, check: () => Promise<void>): Promise<void> {
  if (performance.now() - sentAtMs < windowMs - 2) await check();
}
const hex = (bytes: number) => randomBytes(bytes).toString('hex');

async function openStores(createStore: StoreFactory, options: StoreConformanceOptions): Promise<Stores> {
  const store = await createStore();
  const peers: IdempotencyStore[] = [];
  if (options.createPeerStore !== undefined) {
    for (let index = 0; index < (options.peerCount ?? 3); index++)
      peers.push(await options.createPeerStore());
  }
  return { store, peers };
}

async function closeStores(stores: Stores): Promise<void> {
  for (const peer of stores.peers) await peer.close();
  await stores.store.close();
}

/**
 * The cases over ONE store shared by all of them (created on the first case that runs), plus
 * `close()` to call after the last one.
 */
export function storeConformanceSuite(
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): StoreConformanceSuite {
  let opened: Promise<Stores> | undefined;
  const provider: StoreProvider = {
    open: () => {
      opened ??= openStores(createStore, options);
      return opened;
    },
    done: async () => undefined,
  };
  return {
    cases: buildCases(provider, options),
    close: async () => {
      if (opened === undefined) return;
      const stores = await opened.catch(() => undefined);
      if (stores === undefined) return;
      try {
        await options.cleanup?.(stores.store);
      } finally {
        await closeStores(stores);
      }
    },
  };
}

/**
 * The cases, each self-contained: it makes its own store (and peers) with `createStore` and closes
 * it when it ends. `options.cleanup` is not called (each case forgets its own tenants).
 */
export function storeConformanceCases(
  createStore: StoreFactory,
  options: StoreConformanceOptions = {},
): StoreConformanceCase[] {
  return buildCases({ open: () => openStores(createStore, options), done: closeStores }, options);
}

type Acquired = Extract<ClaimResult, { status: 'acquired' }>;

/** What a case body gets. */
class CaseContext {
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

function statusesOf(results: readonly { status: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result.status] = (counts[result.status] ?? 0) + 1;
  return counts;
}

function holderOf(result: ClaimResult, options: ClaimOptions): Holder[] {
  // A claimer that did not win may still come back with what it believes: its own owner under
  // the fence it saw or the next one. None of these may be accepted.
  const seen = result.status === 'acquired' ? result.fence : 'record' in result ? result.record.fence : 1;
  return [
    { fence: seen, owner: options.owner },
    { fence: seen + 1, owner: options.owner },
  ];
}

/**
 * Every holder-conditioned operation of a holder that is not the record's current one is refused
 * and changes nothing: replays `holders` (old holders, losers of a race) and two forgeries of the
 * current holder (its owner with the next fence, its fence with another owner).
 */
async function refusesNonCurrentHolders(
  context: CaseContext,
  ref: RecordRef,
  holders: readonly Holder[],
  label: string,
): Promise<void> {
  const before = await context.store.get(ref);
  const candidates = [...holders];
  if (before !== null) {
    candidates.push(
      { fence: before.fence + 1, owner: before.owner },
      { fence: before.fence, owner: `${before.owner}-forged` },
    );
  }
  const isCurrent = (holder: Holder) =>
    before !== null && holder.fence === before.fence && holder.owner === before.owner;
  const unique = new Map<string, Holder>();
  for (const holder of candidates) {
    if (holder.fence >= 1 && !isCurrent(holder)) unique.set(`${holder.fence}\u0000${holder.owner}`, holder);
  }
  await Promise.all(
    [...unique.values()].map(async (holder, index) => {
      const on = context.racer(index);
      const what = `${label}: holder ${show(holder)} (record ${show(before && { fence: before.fence, owner: before.owner, state: before.state })})`;
      const renewed = await on.renew(ref, holder, LONG_LEASE_MS);
      equal(renewed.status, 'lost', `${what}: renew`);
      const completed = await on.complete(ref, holder, '"ghost"', DAY_MS);
      ok(completed.status !== 'completed', `${what}: complete was accepted`);
      const marked = await on.markIndeterminate(ref, holder, { type: 'Ghost', message: 'ghost' }, DAY_MS);
      ok(marked.status !== 'marked', `${what}: markIndeterminate was accepted`);
      const released = await on.release(ref, holder);
      ok(released.status !== 'released', `${what}: release was accepted`);
    }),
  );
  same(await context.store.get(ref), before, `${label}: the record after refused operations`);
}

/** Runs every check, then fails once listing all that failed (so one run shows every gap). */
async function everyOf(checks: [string, () => Promise<unknown>][]): Promise<void> {
  const problems: string[] = [];
  for (const [what, check] of checks) {
    try {
      await check();
    } catch (error) {
      problems.push(
        error instanceof Error ? (error.message.split('\n')[0] ?? what) : `${what}: ${show(error)}`,
      );
    }
  }
  if (problems.length > 0) {
    const listed = problems.slice(0, 25).join('\n  ');
    const more = problems.length > 25 ? `\n  … and ${problems.length - 25} more` : '';
    fail(`${problems.length} of ${checks.length} checks failed:\n  ${listed}${more}`);
  }
}

function checkLeaseExpiredError(record: IdempotencyRecord, label: string): void {
  equal(record.error?.type, 'LeaseExpired', `${label}: error.type`);
  ok(
    typeof record.error?.message === 'string' && record.error.message.length > 0,
    `${label}: error.message must be non-empty text, got ${show(record.error)}`,
  );
}

let tooLongOutcome: string | undefined;
let longestOutcome: string | undefined;

function buildCases(provider: StoreProvider, options: StoreConformanceOptions): StoreConformanceCase[] {
  const cases: StoreConformanceCase[] = [];
  const add = (name: string, body: (context: CaseContext) => Promise<void>, timeoutMs = 30_000): void => {
    cases.push({
      name,
      timeoutMs,
      run: async () => {
        const stores = await provider.open();
        const context = new CaseContext(stores, options);
        let failure: { error: unknown } | undefined;
        try {
          await body(context);
        } catch (error) {
          failure = { error };
        }
        try {
          for (const tenant of context.tenants) await stores.store.forget({ tenant });
        } catch (error) {
          // A cleanup failure fails a passing case; it never hides the failure of a failing one.
          failure ??= { error };
        }
        await provider.done(stores);
        if (failure !== undefined) throw failure.error;
      },
    });
  };

  // ---------------------------------------------------------------- claims and holders

  add('50 concurrent claims of one key: exactly one acquired, the rest busy (20 rounds)', async (c) => {
    for (let round = 0; round < 20; round++) {
      const ref = c.ref();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, index) => c.racer(index).claim(ref, c.options())),
      );
      same(statusesOf(results), { acquired: 1, busy: 49 }, `round ${round}`);
    }
  });

  add('a new claim gets fence 1, attempt 1 and a lease in the future', async (c) => {
    const ref = c.ref();
    const { result, opts } = await c.acquire(ref, { leaseMs: 10_000 });
    fields(result, { status: 'acquired', fence: 1, attempt: 1, takeover: false }, 'claim');
    const record = await c.store.get(ref);
    fields(
      record,
      {
        key: ref.key,
        tenant: ref.tenant,
        tool: 'refund',
        fingerprint: opts.fingerprint,
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: opts.owner,
        leaseExpiresAtMs: result.leaseExpiresAtMs,
      },
      'get',
    );
    equal(record?.outcome, undefined, 'outcome of an in_progress record');
    ok((record?.expiresAtMs ?? 0) >= result.leaseExpiresAtMs, 'expiresAtMs >= leaseExpiresAtMs');
  });

  add('a claim resent by its own owner (reply lost) is acquired again, not busy', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref, { leaseMs: 10_000 });
    const resent = await c.store.claim(ref, first.opts);
    fields(resent, { status: 'acquired', fence: 1, attempt: 1, takeover: false }, 'resent claim');
    equal((await c.store.claim(ref, c.options())).status, 'busy', 'a claim by another owner');
    same(await c.store.complete(ref, first.holder, '"once"', DAY_MS), { status: 'completed' }, 'complete');
    equal((await c.store.claim(ref, first.opts)).status, 'completed', 'the resent claim after complete');
  });

  add('a claim of a busy key reports the holder and the store clock', async (c) => {
    const ref = c.ref();
    const { result, opts } = await c.acquire(ref, { leaseMs: 10_000 });
    const busy = await c.store.claim(ref, c.options());
    if (busy.status !== 'busy') fail(`expected busy, got ${show(busy)}`);
    fields(busy.record, { fence: 1, attempt: 1, owner: opts.owner, state: 'in_progress' }, 'busy.record');
    equal(busy.record.leaseExpiresAtMs, result.leaseExpiresAtMs, 'busy.record.leaseExpiresAtMs');
    // Both on the store's clock: the lease ends within leaseMs of the store's now.
    const remainingMs = busy.record.leaseExpiresAtMs - busy.nowMs;
    ok(
      remainingMs > 0 && remainingMs <= 10_000,
      `lease deadline - store now = ${remainingMs} ms, not in (0, 10000]`,
    );
  });

  add(
    'a replay after complete returns the recorded outcome; a second complete changes nothing',
    async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref);
      same(
        await c.store.complete(ref, holder, '{"refundId":"r-1"}', DAY_MS),
        { status: 'completed' },
        'complete',
      );
      const replay = await c.store.claim(ref, c.options());
      if (replay.status !== 'completed') fail(`expected completed, got ${show(replay)}`);
      fields(replay.record, { state: 'completed', outcome: '{"refundId":"r-1"}', fence: 1 }, 'replay.record');
      equal(replay.record.error, undefined, 'error of a completed record');
      const again = await c.store.complete(ref, holder, '{"refundId":"r-2"}', DAY_MS);
      equal(again.status, 'stale', 'a second complete by the same holder');
      fields(
        await c.store.get(ref),
        { state: 'completed', outcome: '{"refundId":"r-1"}' },
        'after the second complete',
      );
    },
  );

  add('complete with a superseded fence changes nothing and reports stale', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref, { leaseMs: c.leaseMs });
    await sleep(c.expireMs);
    const second = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
    fields(second.result, { fence: 2, attempt: 2, takeover: true }, 'takeover');
    const stale = await c.store.complete(ref, first.holder, '"late"', DAY_MS);
    if (stale.status !== 'stale') fail(`expected stale, got ${show(stale)}`);
    fields(stale.record, { state: 'in_progress', fence: 2 }, 'stale.record');
    fields(await c.store.get(ref), { state: 'in_progress', fence: 2, owner: second.opts.owner }, 'get');
    same(await c.store.complete(ref, second.holder, '"winner"', DAY_MS), { status: 'completed' }, 'complete');
    equal((await c.store.complete(ref, first.holder, '"later"', DAY_MS)).status, 'stale', 'later complete');
    fields(await c.store.get(ref), { state: 'completed', outcome: '"winner"', fence: 2 }, 'final');
  });

  add('the same fence from an earlier life of the key is stale (owner is checked)', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref);
    same(await c.store.release(ref, first.holder), { status: 'released' }, 'release');
    const second = await c.acquire(ref);
    equal(second.result.fence, 1, 'fence of the new life');
    equal((await c.store.complete(ref, first.holder, '"ghost"', DAY_MS)).status, 'stale', 'complete');
    same(await c.store.renew(ref, first.holder, 10_000), { status: 'lost', reason: 'stale' }, 'renew');
    equal((await c.store.release(ref, first.holder)).status, 'stale', 'release');
    equal(
      (await c.store.markIndeterminate(ref, first.holder, { type: 'E', message: 'm' }, DAY_MS)).status,
      'stale',
      'markIndeterminate',
    );
    fields(await c.store.get(ref), { state: 'in_progress', owner: second.opts.owner }, 'get');
  });

  add('the current owner with another fence is refused (fence is checked)', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref);
    for (const fence of [2, 3]) {
      const forged = { fence, owner: holder.owner };
      same(
        await c.store.renew(ref, forged, 10_000),
        { status: 'lost', reason: 'stale' },
        `renew fence ${fence}`,
      );
      equal((await c.store.complete(ref, forged, '"x"', DAY_MS)).status, 'stale', `complete fence ${fence}`);
      equal((await c.store.release(ref, forged)).status, 'stale', `release fence ${fence}`);
      equal(
        (await c.store.markIndeterminate(ref, forged, { type: 'E', message: 'm' }, DAY_MS)).status,
        'stale',
        `markIndeterminate fence ${fence}`,
      );
    }
    fields(await c.store.get(ref), { state: 'in_progress', fence: 1, owner: holder.owner }, 'get');
  });

  add('an expired lease is taken over at-least-once with a higher fence', async (c) => {
    const ref = c.ref();
    const sentAtMs = performance.now();
    await c.acquire(ref, { leaseMs: c.leaseMs });
    await whileWithin(sentAtMs, c.leaseMs, async () => {
      equal((await c.store.claim(ref, c.options())).status, 'busy', 'claim within the lease');
    });
    await sleep(c.expireMs);
    const takeover = await c.acquire(ref);
    fields(takeover.result, { fence: 2, attempt: 2, takeover: true }, 'takeover');
    fields(await c.store.get(ref), { owner: takeover.opts.owner, fence: 2, attempt: 2 }, 'get');
  });

  add('an expired lease becomes indeterminate at-most-once, never re-run', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref, { leaseMs: c.leaseMs, mode: 'at-most-once' });
    await sleep(c.expireMs);
    const claim = await c.store.claim(ref, c.options({ mode: 'at-most-once' }));
    if (claim.status !== 'indeterminate') fail(`expected indeterminate, got ${show(claim)}`);
    fields(claim.record, { state: 'indeterminate', fence: 1, attempt: 1 }, 'record');
    checkLeaseExpiredError(claim.record, 'record');
    equal((await c.store.claim(ref, c.options({ mode: 'at-most-once' }))).status, 'indeterminate', 'again');
    equal((await c.store.claim(ref, c.options())).status, 'indeterminate', 'at-least-once after');
    // The lost holder may still state its outcome: the late truth beats "unknown".
    same(await c.store.complete(ref, first.holder, '"it happened"', DAY_MS), { status: 'completed' }, 'late');
    fields(await c.store.get(ref), { state: 'completed', outcome: '"it happened"' }, 'get');
  });

  add('renew extends a live lease and fails after a takeover', async (c) => {
    const ref = c.ref();
    const L = c.leaseMs;
    const first = await c.acquire(ref, { leaseMs: L * 2 });
    const renewSentAtMs = performance.now();
    const renewed = await c.store.renew(ref, first.holder, L * 6);
    if (renewed.status !== 'renewed') fail(`expected renewed, got ${show(renewed)}`);
    ok(renewed.leaseExpiresAtMs > first.result.leaseExpiresAtMs, 'renewed lease ends later');
    fields(await c.store.get(ref), { leaseExpiresAtMs: renewed.leaseExpiresAtMs }, 'get after renew');
    await sleep(L * 2 + 50);
    await whileWithin(renewSentAtMs, L * 6, async () => {
      equal((await c.store.claim(ref, c.options())).status, 'busy', 'claim within the renewed lease');
    });
    await sleep(L * 4 + 25);
    const second = await c.acquire(ref);
    equal(second.result.fence, 2, 'takeover fence');
    same(await c.store.renew(ref, first.holder, 10_000), { status: 'lost', reason: 'stale' }, 'old renew');
    equal((await c.store.renew(ref, second.holder, 10_000)).status, 'renewed', 'new renew');
    await c.store.complete(ref, second.holder, '1', DAY_MS);
    same(await c.store.renew(ref, second.holder, 10_000), { status: 'lost', reason: 'settled' }, 'settled');
    same(
      await c.store.renew(c.ref(), second.holder, 10_000),
      { status: 'lost', reason: 'not_found' },
      'missing',
    );
  });

  add('maxAttempts lost attempts give abandoned', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: c.leaseMs, maxAttempts: 2 });
    await sleep(c.expireMs);
    const second = await c.acquire(ref, { leaseMs: c.leaseMs, maxAttempts: 2 });
    equal(second.result.attempt, 2, 'attempt of the takeover');
    await sleep(c.expireMs);
    const third = await c.store.claim(ref, c.options({ maxAttempts: 2 }));
    if (third.status !== 'abandoned') fail(`expected abandoned, got ${show(third)}`);
    fields(third.record, { state: 'abandoned', attempt: 2, fence: 2 }, 'record');
    checkLeaseExpiredError(third.record, 'record');
    equal((await c.store.claim(ref, c.options({ maxAttempts: 2 }))).status, 'abandoned', 'again');
  });

  add('release frees the key; a stale or missing release is reported', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref);
    equal((await c.store.release(ref, { fence: 1, owner: 'someone-else' })).status, 'stale', 'other owner');
    same(await c.store.release(ref, first.holder), { status: 'released' }, 'release');
    equal(await c.store.get(ref), null, 'get after release');
    same(await c.store.release(ref, first.holder), { status: 'not_found' }, 'release again');
    const again = await c.acquire(ref);
    fields(again.result, { fence: 1, attempt: 1, takeover: false }, 'a new life');
    await c.store.complete(ref, again.holder, '1', DAY_MS);
    equal((await c.store.release(ref, again.holder)).status, 'stale', 'release of a completed record');
    fields(await c.store.get(ref), { state: 'completed' }, 'get');
  });

  add('a record is gone after its retention window and the key is free again', async (c) => {
    const ref = c.ref();
    const retentionMs = c.leaseMs * 2;
    const { holder } = await c.acquire(ref, { leaseMs: c.leaseMs, retentionMs });
    const sentAtMs = performance.now();
    await c.store.complete(ref, holder, '"kept"', retentionMs);
    await whileWithin(sentAtMs, retentionMs, async () => {
      equal((await c.store.claim(ref, c.options())).status, 'completed', 'within retention');
    });
    await sleep(retentionMs + c.expireMs - c.leaseMs);
    equal(await c.store.get(ref), null, 'get after retention');
    fields((await c.acquire(ref)).result, { fence: 1, attempt: 1, takeover: false }, 'claim after retention');
  });

  add('tenants are isolated and forget erases only one tenant', async (c) => {
    const key = hex(32);
    const a = { tenant: c.tenant(), key };
    const b = { tenant: c.tenant(), key };
    const ha = await c.acquire(a);
    const hb = await c.acquire(b);
    await c.store.complete(a, ha.holder, '"a"', DAY_MS);
    await c.store.complete(b, hb.holder, '"b"', DAY_MS);
    const other = { tenant: a.tenant, key: hex(32) };
    await c.acquire(other);
    fields(await c.store.get(a), { outcome: '"a"' }, 'a');
    fields(await c.store.get(b), { outcome: '"b"' }, 'b');
    equal(await c.store.forget({ tenant: a.tenant }), 2, 'forget a');
    equal(await c.store.get(a), null, 'a after forget');
    equal(await c.store.get(other), null, 'other key of a after forget');
    fields(await c.store.get(b), { outcome: '"b"' }, 'b after forget of a');
    equal(await c.store.forget({ tenant: a.tenant }), 0, 'forget a again');
  });

  add('forget treats a tenant name literally (no glob, prefix or separator injection)', async (c) => {
    const base = c.tenant();
    const victims = [`${base}-x`, `${base}:y`, `${base}}z`, `${base}x`];
    c.tenants.push(...victims);
    for (const tenant of victims) {
      const ref = { tenant, key: hex(32) };
      const { holder } = await c.acquire(ref);
      await c.store.complete(ref, holder, '1', DAY_MS);
    }
    for (const pattern of [`${base}*`, `${base}?x`, `${base}[-:]y`, `${base}%`, `${base}_x`, base]) {
      equal(await c.store.forget({ tenant: pattern }), 0, `forget ${show(pattern)}`);
    }
    for (const tenant of victims) equal(await c.store.forget({ tenant }), 1, `forget ${show(tenant)}`);
  });

  add('markIndeterminate keeps the claim; resolve settles it as completed or released', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref, { mode: 'at-most-once' });
    const marked = await c.store.markIndeterminate(
      ref,
      holder,
      { type: 'ECONNRESET', message: 'socket hang up' },
      DAY_MS,
    );
    same(marked, { status: 'marked' }, 'mark');
    const claim = await c.store.claim(ref, c.options({ mode: 'at-most-once' }));
    if (claim.status !== 'indeterminate') fail(`expected indeterminate, got ${show(claim)}`);
    same(claim.record.error, { type: 'ECONNRESET', message: 'socket hang up' }, 'recorded error');
    equal(
      (await c.store.markIndeterminate(ref, holder, { type: 'X', message: 'y' }, DAY_MS)).status,
      'stale',
      'mark again',
    );
    same(await c.store.resolve(ref, { outcome: '"verified"' }, DAY_MS), { status: 'resolved' }, 'resolve');
    const replay = await c.store.claim(ref, c.options({ mode: 'at-most-once' }));
    if (replay.status !== 'completed') fail(`expected completed, got ${show(replay)}`);
    equal(replay.record.outcome, '"verified"', 'resolved outcome');
    equal(
      (await c.store.resolve(ref, { released: true }, DAY_MS)).status,
      'not_resolvable',
      'resolve completed',
    );

    const other = c.ref();
    const second = await c.acquire(other, { mode: 'at-most-once' });
    equal(
      (await c.store.resolve(other, { released: true }, DAY_MS)).status,
      'not_resolvable',
      'resolve in_progress',
    );
    equal(
      (await c.store.resolve(other, { outcome: '"forced"' }, DAY_MS)).status,
      'not_resolvable',
      'resolve in_progress with an outcome',
    );
    fields(
      await c.store.get(other),
      { state: 'in_progress', owner: second.opts.owner },
      'live record untouched',
    );
    await c.store.markIndeterminate(other, second.holder, { type: 'Timeout', message: 't' }, DAY_MS);
    same(await c.store.resolve(other, { released: true }, DAY_MS), { status: 'resolved' }, 'release');
    equal(await c.store.get(other), null, 'get after resolve released');
    equal((await c.store.claim(other, c.options())).status, 'acquired', 'claim after resolve released');
    same(await c.store.resolve(c.ref(), { released: true }, DAY_MS), { status: 'not_found' }, 'missing');
  });

  add('an abandoned record can be resolved', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: c.leaseMs, maxAttempts: 1 });
    await sleep(c.expireMs);
    equal((await c.store.claim(ref, c.options({ maxAttempts: 1 }))).status, 'abandoned', 'claim');
    same(await c.store.resolve(ref, { released: true }, DAY_MS), { status: 'resolved' }, 'resolve');
    equal((await c.store.claim(ref, c.options())).status, 'acquired', 'claim after');
  });

  add('another tool, or another fingerprint when checked, is a conflict before any state', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { checkFingerprint: true, fingerprint: 'a'.repeat(64) });
    const otherArgs = await c.store.claim(
      ref,
      c.options({ checkFingerprint: true, fingerprint: 'b'.repeat(64) }),
    );
    if (otherArgs.status !== 'conflict') fail(`other arguments: expected conflict, got ${show(otherArgs)}`);
    equal(otherArgs.record.fingerprint, 'a'.repeat(64), 'conflict.record.fingerprint');
    const otherTool = await c.store.claim(ref, c.options({ tool: 'email', fingerprint: 'a'.repeat(64) }));
    if (otherTool.status !== 'conflict') fail(`other tool: expected conflict, got ${show(otherTool)}`);
    equal(otherTool.record.tool, 'refund', 'conflict.record.tool');
    const sameArgs = await c.store.claim(
      ref,
      c.options({ checkFingerprint: true, fingerprint: 'a'.repeat(64) }),
    );
    equal(sameArgs.status, 'busy', 'same arguments');
    equal((await c.store.claim(ref, c.options({ fingerprint: 'b'.repeat(64) }))).status, 'busy', 'unchecked');
  });

  // ---------------------------------------------------------------- waiting

  add('waitForSettle resolves at once for a settled or missing record', async (c) => {
    const ref = c.ref();
    equal(await c.store.waitForSettle(ref, { timeoutMs: 5_000 }), 'settled', 'missing');
    const { holder } = await c.acquire(ref);
    await c.store.complete(ref, holder, '1', DAY_MS);
    equal(await c.store.waitForSettle(ref, { timeoutMs: 5_000 }), 'settled', 'completed');
  });

  for (const event of ['complete', 'release', 'markIndeterminate'] as const) {
    add(`waitForSettle wakes on ${event}`, async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
      const started = Date.now();
      const waiting = c.racer(1).waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs });
      await sleep(Math.min(100, c.leaseMs));
      if (event === 'complete') await c.store.complete(ref, holder, '"done"', DAY_MS);
      else if (event === 'release') await c.store.release(ref, holder);
      else await c.store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS);
      equal(await waiting, 'settled', 'wait');
      ok(Date.now() - started < c.wakeTimeoutMs * 0.9, 'woken well before its timeout');
    });
  }

  add('waitForSettle wakes when the lease expires', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: c.leaseMs * 2 });
    equal(await c.store.waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs }), 'lease_expired', 'wait');
    equal((await c.store.claim(ref, c.options())).status, 'acquired', 'claim after the wake-up');
  });

  add('waitForSettle times out while the holder keeps a live lease', async (c) => {
    const ref = c.ref();
    await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
    equal(await c.store.waitForSettle(ref, { timeoutMs: c.leaseMs * 2 }), 'timeout', 'wait');
  });

  add('many waiters on one key all wake on one settle', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
    const waiters = Array.from({ length: 100 }, (_, index) =>
      c.racer(index).waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs }),
    );
    await sleep(Math.min(100, c.leaseMs));
    await c.store.complete(ref, holder, '"done"', DAY_MS);
    same(statusesOf((await Promise.all(waiters)).map((status) => ({ status }))), { settled: 100 }, 'waiters');
  });

  // ---------------------------------------------------------------- races (real concurrency)
  //
  // Every operation of a round is issued at once (Promise.all) from the racers' stores; each
  // round is a fresh key, and the rounds run at once. The checks are invariants, never one
  // interleaving: one holder at a time, fences rise by one per takeover, one recorded outcome,
  // and afterwards no holder but the current one can change the record.

  const raceTimeoutMs = 60_000;

  /** The racers' claim options, and where in the batch the extra operation goes. */
  const claimers = (c: CaseContext, overrides: (index: number) => Partial<ClaimOptions> = () => ({})) =>
    Array.from({ length: c.racers }, (_, index) => c.options(overrides(index)));

  /** Issues `extra` and the claims at once; `extra` first in even rounds, in the middle in odd ones. */
  async function raceWith<T>(
    c: CaseContext,
    round: number,
    ref: RecordRef,
    claimOptions: ClaimOptions[],
    extra: () => Promise<T>,
  ): Promise<{ extra: T; claims: ClaimResult[] }> {
    const at = round % 2 === 0 ? 0 : Math.floor(claimOptions.length / 2);
    const work: (() => Promise<unknown>)[] = claimOptions.map(
      (opts, index) => () => c.racer(index + 1).claim(ref, opts),
    );
    work.splice(at, 0, extra);
    // Issued in this order, all before any reply is awaited.
    const results = await Promise.all(work.map((start) => start()));
    const [extraResult] = results.splice(at, 1);
    return { extra: extraResult as T, claims: results as ClaimResult[] };
  }

  function winnerOf(claims: ClaimResult[], claimOptions: ClaimOptions[]) {
    const index = claims.findIndex((claim) => claim.status === 'acquired');
    return index < 0
      ? undefined
      : { result: claims[index] as Acquired, options: claimOptions[index] as ClaimOptions, index };
  }

  const losersOf = (claims: ClaimResult[], claimOptions: ClaimOptions[], winner?: number) =>
    claims.flatMap((claim, index) =>
      index === winner ? [] : holderOf(claim, claimOptions[index] as ClaimOptions),
    );

  add(
    'race: N claimers take over one expired lease at-least-once: exactly one acquired, fence raised once',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c);
        const claims = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
        same(statusesOf(claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
        const winner = winnerOf(claims, opts);
        ok(winner !== undefined, 'a winner');
        fields(winner.result, { fence: 2, attempt: 2, takeover: true }, 'winner');
        fields(
          await c.store.get(ref),
          { state: 'in_progress', fence: 2, attempt: 2, owner: winner.options.owner },
          'get',
        );
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(claims, opts, winner.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: N claimers find one expired lease at-most-once: all indeterminate, none acquired, fence unchanged',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs, mode: 'at-most-once' });
        await sleep(c.expireMs);
        const opts = claimers(c, () => ({ mode: 'at-most-once' }));
        const claims = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
        same(statusesOf(claims), { indeterminate: opts.length }, 'statuses');
        const record = await c.store.get(ref);
        fields(record, { state: 'indeterminate', fence: 1, attempt: 1, owner: first.opts.owner }, 'get');
        checkLeaseExpiredError(record as IdempotencyRecord, 'get');
        await refusesNonCurrentHolders(c, ref, losersOf(claims, opts), `round ${round}`);
        // The holder whose lease was marked may still state its outcome, once.
        same(
          await c.store.complete(ref, first.holder, '"late"', DAY_MS),
          { status: 'completed' },
          'late complete',
        );
        fields(
          await c.store.get(ref),
          { state: 'completed', outcome: '"late"', fence: 1 },
          'after late complete',
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: at-least-once and at-most-once claimers on one expired lease: one decision (takeover or indeterminate)',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c, (index) => ({
          mode: (index + round) % 2 === 0 ? 'at-most-once' : 'at-least-once',
        }));
        const claims = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
        const statuses = statusesOf(claims);
        const winner = winnerOf(claims, opts);
        const record = await c.store.get(ref);
        if (winner === undefined) {
          same(statuses, { indeterminate: opts.length }, 'no takeover: every claimer sees indeterminate');
          fields(record, { state: 'indeterminate', fence: 1 }, 'get');
        } else {
          same(statuses, { acquired: 1, busy: opts.length - 1 }, 'a takeover: the others are busy');
          fields(winner.result, { fence: 2, attempt: 2 }, 'winner');
          fields(record, { state: 'in_progress', fence: 2, owner: winner.options.owner }, 'get');
        }
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(claims, opts, winner?.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: complete of the expired holder against a takeover: one recorded outcome or one new holder',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c);
        const race = await raceWith(c, round, ref, opts, () =>
          c.racer(0).complete(ref, first.holder, '"first"', DAY_MS),
        );
        const winner = winnerOf(race.claims, opts);
        const record = await c.store.get(ref);
        if (race.extra.status === 'completed') {
          equal(winner, undefined, 'a claim acquired a key whose outcome was recorded');
          same(statusesOf(race.claims), { completed: opts.length }, 'statuses after the complete');
          fields(record, { state: 'completed', outcome: '"first"', fence: 1 }, 'get');
        } else {
          equal(race.extra.status, 'stale', 'complete after a takeover');
          same(statusesOf(race.claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
          ok(winner !== undefined, 'a winner');
          fields(winner.result, { fence: 2 }, 'winner');
          fields(record, { state: 'in_progress', fence: 2, owner: winner.options.owner }, 'get');
        }
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(race.claims, opts, winner?.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: renew of the expired holder against a takeover: renewed or taken over, never both',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c);
        const race = await raceWith(c, round, ref, opts, () =>
          c.racer(0).renew(ref, first.holder, LONG_LEASE_MS),
        );
        const winner = winnerOf(race.claims, opts);
        const record = await c.store.get(ref);
        if (race.extra.status === 'renewed') {
          equal(winner, undefined, 'a claim acquired a key whose holder renewed');
          same(statusesOf(race.claims), { busy: opts.length }, 'statuses');
          fields(record, { state: 'in_progress', fence: 1, owner: first.opts.owner }, 'get');
        } else {
          same(race.extra, { status: 'lost', reason: 'stale' }, 'renew after a takeover');
          same(statusesOf(race.claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
          ok(winner !== undefined, 'a winner');
          fields(record, { state: 'in_progress', fence: 2, owner: winner.options.owner }, 'get');
        }
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(race.claims, opts, winner?.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: release of the expired holder against claims: exactly one new holder, its record kept',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c);
        const race = await raceWith(c, round, ref, opts, () => c.racer(0).release(ref, first.holder));
        same(statusesOf(race.claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
        const winner = winnerOf(race.claims, opts);
        ok(winner !== undefined, 'a winner');
        if (race.extra.status === 'released') {
          fields(winner.result, { fence: 1, attempt: 1, takeover: false }, 'winner of a released key');
        } else {
          equal(race.extra.status, 'stale', 'release after a takeover');
          fields(winner.result, { fence: 2, attempt: 2, takeover: true }, 'winner of a takeover');
        }
        fields(
          await c.store.get(ref),
          { state: 'in_progress', fence: winner.result.fence, owner: winner.options.owner },
          'the winner still holds the record',
        );
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(race.claims, opts, winner.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: markIndeterminate of the expired holder against a takeover: marked or taken over, never both',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const opts = claimers(c);
        const race = await raceWith(c, round, ref, opts, () =>
          c.racer(0).markIndeterminate(ref, first.holder, { type: 'RaceMark', message: 'unknown' }, DAY_MS),
        );
        const winner = winnerOf(race.claims, opts);
        const record = await c.store.get(ref);
        if (race.extra.status === 'marked') {
          equal(winner, undefined, 'a claim acquired a key that was marked indeterminate');
          same(statusesOf(race.claims), { indeterminate: opts.length }, 'statuses');
          fields(
            record,
            { state: 'indeterminate', fence: 1, error: { type: 'RaceMark', message: 'unknown' } },
            'get',
          );
        } else {
          equal(race.extra.status, 'stale', 'mark after a takeover');
          same(statusesOf(race.claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
          ok(winner !== undefined, 'a winner');
          fields(record, { state: 'in_progress', fence: 2, owner: winner.options.owner }, 'get');
        }
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(race.claims, opts, winner?.index)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: an operator resolve against the late complete of an indeterminate record: exactly one wins',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: LONG_LEASE_MS, mode: 'at-most-once' });
        await c.store.markIndeterminate(ref, first.holder, { type: 'Timeout', message: 'no reply' }, DAY_MS);
        const released = round % 4 >= 2;
        const resolve = () =>
          c.racer(round).resolve(ref, released ? { released: true } : { outcome: '"operator"' }, DAY_MS);
        const complete = () => c.racer(round + 1).complete(ref, first.holder, '"late"', DAY_MS);
        const [resolved, completed] =
          round % 2 === 0
            ? await Promise.all([resolve(), complete()])
            : await Promise.all([complete(), resolve()]).then(([a, b]) => [b, a] as const);
        const record = await c.store.get(ref);
        if (completed.status === 'completed') {
          equal(resolved.status, 'not_resolvable', 'resolve after the late complete');
          fields(record, { state: 'completed', outcome: '"late"' }, 'get');
        } else {
          equal(resolved.status, 'resolved', 'neither the complete nor the resolve took effect');
          if (released) {
            equal(completed.status, 'not_found', 'complete after a release');
            equal(record, null, 'get');
          } else {
            equal(completed.status, 'stale', 'complete after the resolve');
            fields(record, { state: 'completed', outcome: '"operator"' }, 'get');
          }
        }
        await refusesNonCurrentHolders(c, ref, [first.holder], `round ${round}`);
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: two operators resolve one record at once: exactly one resolves',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { mode: 'at-most-once' });
        await c.store.markIndeterminate(ref, first.holder, { type: 'Timeout', message: 'no reply' }, DAY_MS);
        const resolutions =
          round % 2 === 0
            ? [{ outcome: '"operator-a"' }, { outcome: '"operator-b"' }]
            : [{ released: true as const }, { outcome: '"operator-b"' }];
        const results = await Promise.all(
          resolutions.map((resolution, index) => c.racer(index).resolve(ref, resolution, DAY_MS)),
        );
        const winners = results.flatMap((result, index) => (result.status === 'resolved' ? [index] : []));
        equal(winners.length, 1, `resolved answers (${show(results)})`);
        const winner = resolutions[winners[0] as number] as { outcome: string } | { released: true };
        const loser = results[1 - (winners[0] as number)];
        const record = await c.store.get(ref);
        if ('outcome' in winner) {
          equal(loser?.status, 'not_resolvable', 'the other resolve');
          fields(record, { state: 'completed', outcome: winner.outcome }, 'get');
        } else {
          equal(loser?.status, 'not_found', 'the other resolve');
          equal(record, null, 'get');
        }
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: claims against the retention expiry of a completed record: one new life, fence 1',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const retentionMs = c.leaseMs;
        const first = await c.acquire(ref, { leaseMs: c.leaseMs, retentionMs });
        await c.store.complete(ref, first.holder, '"kept"', retentionMs);
        // Bursts of claims every few ms from before the expiry to well after it.
        const stepMs = Math.max(3, Math.round(c.leaseMs / 15));
        await sleep(Math.max(0, retentionMs - 5 * stepMs));
        const claims: { result: ClaimResult; options: ClaimOptions }[] = [];
        const bursts = Math.ceil((c.expireMs - c.leaseMs) / stepMs) + 10;
        for (let burst = 0; burst < bursts; burst++) {
          const opts = claimers(c);
          const results = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
          for (const [index, result] of results.entries()) {
            claims.push({ result, options: opts[index] as ClaimOptions });
          }
          await sleep(stepMs);
        }
        const statuses = statusesOf(claims.map((claim) => claim.result));
        equal(statuses.acquired, 1, `acquired answers across the bursts (${show(statuses)})`);
        for (const { result } of claims) {
          ok(['completed', 'acquired', 'busy'].includes(result.status), `unexpected answer ${show(result)}`);
          if (result.status === 'completed') equal(result.record.outcome, '"kept"', 'replayed outcome');
        }
        const winner = claims.find((claim) => claim.result.status === 'acquired') as {
          result: Acquired;
          options: ClaimOptions;
        };
        fields(winner.result, { fence: 1, attempt: 1, takeover: false }, 'the new life');
        fields(
          await c.store.get(ref),
          { state: 'in_progress', fence: 1, owner: winner.options.owner },
          'get',
        );
        const losers = claims
          .filter((claim) => claim !== winner)
          .flatMap((claim) => holderOf(claim.result, claim.options));
        await refusesNonCurrentHolders(c, ref, [first.holder, ...losers], `round ${round}`);
      });
    },
    raceTimeoutMs,
  );

  add(
    'race: forget against claims: every new holder follows an erasure, none survives uncounted',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const first = await c.acquire(ref, { leaseMs: LONG_LEASE_MS });
        const opts = claimers(c);
        const race = await raceWith(c, round, ref, opts, () => c.racer(0).forget({ tenant: ref.tenant }));
        const erased = race.extra;
        const acquired = race.claims.filter((claim) => claim.status === 'acquired') as Acquired[];
        ok(erased >= 1, `forget erased ${erased} records, the first holder's record existed`);
        ok(acquired.length <= erased, `${acquired.length} new holders after ${erased} erasures`);
        for (const claim of acquired) fields(claim, { fence: 1, attempt: 1, takeover: false }, 'a new life');
        for (const claim of race.claims)
          ok(['acquired', 'busy'].includes(claim.status), `answer ${show(claim)}`);
        const record = await c.store.get(ref);
        // Lives made (the first + every acquired) minus lives erased = records left (0 or 1).
        equal(1 + acquired.length - erased, record === null ? 0 : 1, `records left (${show(record)})`);
        if (record !== null) {
          const winner = winnerOf(race.claims, opts);
          ok(
            race.claims.some(
              (claim, index) => claim.status === 'acquired' && opts[index]?.owner === record.owner,
            ),
            `the record left is not a new holder's: ${show(record)} (${show(winner)})`,
          );
        }
        await refusesNonCurrentHolders(
          c,
          ref,
          [first.holder, ...losersOf(race.claims, opts)],
          `round ${round}`,
        );
      });
    },
    raceTimeoutMs,
  );

  // ---------------------------------------------------------------- store rules S1-S7

  const badNames: [string, unknown][] = [
    ['empty', ''],
    ['257 characters', 'n'.repeat(257)],
    ['with NUL', 'a\u0000b'],
    ['a lone high surrogate', 'a\uD800b'],
    ['a lone low surrogate', '\uDC00'],
    ['not a string', 42],
  ];
  const badLeases: unknown[] = [0, -1, 1.5, MAX_TIMER_MS + 1, Number.NaN, '100'];
  const badRetentions: unknown[] = [0, -5, 2.5, MAX_RETENTION_MS + 1, Number.POSITIVE_INFINITY];
  const isInputError = (error: unknown) => StoreInputError.isInstance(error);

  add(
    'S1: a claim with any bad field is refused with StoreInputError and writes nothing',
    async (c) => {
      const ref = c.ref();
      const bad: [string, RecordRef, ClaimOptions][] = [];
      for (const [what, value] of badNames) {
        bad.push([`tenant ${what}`, { tenant: value as string, key: ref.key }, c.options()]);
        bad.push([`key ${what}`, { tenant: ref.tenant, key: value as string }, c.options()]);
        for (const field of ['tool', 'fingerprint', 'owner'] as const) {
          bad.push([`${field} ${what}`, ref, c.options({ [field]: value })]);
        }
      }
      for (const value of badLeases)
        bad.push([`leaseMs ${show(value)}`, ref, c.options({ leaseMs: value as number })]);
      for (const value of badRetentions) {
        bad.push([`retentionMs ${show(value)}`, ref, c.options({ retentionMs: value as number })]);
      }
      for (const value of [0, 1001, 2.5, -1])
        bad.push([`maxAttempts ${value}`, ref, c.options({ maxAttempts: value })]);
      bad.push(['mode', ref, c.options({ mode: 'sometimes' as ClaimOptions['mode'] })]);
      bad.push(['checkFingerprint', ref, c.options({ checkFingerprint: 'yes' as unknown as boolean })]);
      await everyOf(
        bad.map(([what, badRef, opts]): [string, () => Promise<unknown>] => [
          what,
          () => rejects(() => c.store.claim(badRef, opts), isInputError, `claim with ${what}`),
        ]),
      );
      equal(await c.store.get(ref), null, 'nothing was written under the good reference');
      fields(
        (await c.acquire(ref)).result,
        { fence: 1, attempt: 1, takeover: false },
        'the first valid claim',
      );
      equal(await c.store.forget({ tenant: ref.tenant }), 1, 'records of the tenant');
    },
    60_000,
  );

  add(
    'S1: every other operation with bad input is refused with StoreInputError and changes nothing',
    async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref);
      const marked = c.ref();
      const markedBy = await c.acquire(marked, { mode: 'at-most-once' });
      await c.store.markIndeterminate(marked, markedBy.holder, { type: 'E', message: 'm' }, DAY_MS);
      const before = await c.store.get(ref);
      const beforeMarked = await c.store.get(marked);
      tooLongOutcome ??= 'x'.repeat(MAX_OUTCOME_LENGTH + 1);
      const badHolders: [string, Holder][] = [
        ['fence 0', { fence: 0, owner: holder.owner }],
        ['fence 1.5', { fence: 1.5, owner: holder.owner }],
        ['fence NaN', { fence: Number.NaN, owner: holder.owner }],
        ...badNames.map(([what, value]): [string, Holder] => [
          `owner ${what}`,
          { fence: 1, owner: value as string },
        ]),
      ];
      const badRefs = badNames.flatMap(([what, value]): [string, RecordRef][] => [
        [`tenant ${what}`, { tenant: value as string, key: ref.key }],
        [`key ${what}`, { tenant: ref.tenant, key: value as string }],
      ]);
      const calls: [string, () => Promise<unknown>][] = [];
      for (const [what, bad] of badHolders) {
        calls.push([`renew ${what}`, () => c.store.renew(ref, bad, 10_000)]);
        calls.push([`complete ${what}`, () => c.store.complete(ref, bad, '"x"', DAY_MS)]);
        calls.push([`release ${what}`, () => c.store.release(ref, bad)]);
        calls.push([
          `markIndeterminate ${what}`,
          () => c.store.markIndeterminate(ref, bad, { type: 'E', message: 'm' }, DAY_MS),
        ]);
      }
      for (const value of badLeases)
        calls.push([`renew leaseMs ${show(value)}`, () => c.store.renew(ref, holder, value as number)]);
      for (const value of badRetentions) {
        calls.push([
          `complete retentionMs ${show(value)}`,
          () => c.store.complete(ref, holder, '"x"', value as number),
        ]);
        calls.push([
          `markIndeterminate retentionMs ${show(value)}`,
          () => c.store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, value as number),
        ]);
        calls.push([
          `resolve retentionMs ${show(value)}`,
          () => c.store.resolve(marked, { outcome: '"x"' }, value as number),
        ]);
      }
      for (const [what, outcome] of [
        ['a lone surrogate', 'a\uD800'],
        ['a lone low surrogate', '\uDC00"'],
        ['more than 16 Mi characters', tooLongOutcome],
        ['not a string', 42],
      ] as [string, unknown][]) {
        calls.push([
          `complete outcome ${what}`,
          () => c.store.complete(ref, holder, outcome as string, DAY_MS),
        ]);
        calls.push([
          `resolve outcome ${what}`,
          () => c.store.resolve(marked, { outcome: outcome as string }, DAY_MS),
        ]);
      }
      for (const [what, error] of [
        ['type empty', { type: '', message: 'm' }],
        ['type with NUL', { type: 'E\u0000', message: 'm' }],
        ['type of 257 characters', { type: 'E'.repeat(257), message: 'm' }],
        ['type with a lone surrogate', { type: 'E\uD800', message: 'm' }],
        ['message with NUL', { type: 'E', message: 'a\u0000b' }],
        ['message of 4097 characters', { type: 'E', message: 'm'.repeat(4097) }],
        ['message with a lone surrogate', { type: 'E', message: '\uDFFF' }],
        ['message not a string', { type: 'E', message: 7 }],
      ] as [string, unknown][]) {
        calls.push([
          `markIndeterminate error ${what}`,
          () => c.store.markIndeterminate(ref, holder, error as { type: string; message: string }, DAY_MS),
        ]);
      }
      for (const [what, bad] of badRefs) {
        calls.push([`get ${what}`, () => c.store.get(bad)]);
        calls.push([`renew ${what}`, () => c.store.renew(bad, holder, 10_000)]);
        calls.push([`complete ${what}`, () => c.store.complete(bad, holder, '"x"', DAY_MS)]);
        calls.push([`release ${what}`, () => c.store.release(bad, holder)]);
        calls.push([`resolve ${what}`, () => c.store.resolve(bad, { released: true }, DAY_MS)]);
        calls.push([`waitForSettle ${what}`, () => c.store.waitForSettle(bad, { timeoutMs: 50 })]);
      }
      for (const [what, value] of badNames) {
        calls.push([`forget tenant ${what}`, () => c.store.forget({ tenant: value as string })]);
      }
      await everyOf(
        calls.map(([what, call]): [string, () => Promise<unknown>] => [
          what,
          () => rejects(call, isInputError, what),
        ]),
      );
      same(await c.store.get(ref), before, 'the held record after the refused operations');
      same(await c.store.get(marked), beforeMarked, 'the indeterminate record after the refused operations');
      same(
        await c.store.complete(ref, holder, '"fine"', DAY_MS),
        { status: 'completed' },
        'a valid complete',
      );
    },
    60_000,
  );

  add(
    'S1: the largest accepted names, durations, counts and outcome are accepted',
    async (c) => {
      const tenant = c.tenant().padEnd(256, 't');
      c.tenants.push(tenant);
      const ref = { tenant, key: 'k'.repeat(256) };
      const name = 'n'.repeat(256);
      const { holder } = await c.acquire(ref, {
        tool: name,
        fingerprint: 'p'.repeat(256),
        owner: 'o'.repeat(250) + hex(3),
        leaseMs: MAX_TIMER_MS,
        retentionMs: MAX_RETENTION_MS,
        maxAttempts: 1000,
      });
      equal(
        (await c.store.renew(ref, holder, MAX_TIMER_MS)).status,
        'renewed',
        'renew with the longest lease',
      );
      longestOutcome ??= `"${'x'.repeat(MAX_OUTCOME_LENGTH - 2)}"`;
      same(
        await c.store.complete(ref, holder, longestOutcome, MAX_RETENTION_MS),
        { status: 'completed' },
        'complete',
      );
      const record = await c.store.get(ref);
      ok(
        record?.outcome === longestOutcome,
        `the 16 Mi outcome came back changed (length ${record?.outcome?.length})`,
      );
      fields(record, { tool: name, state: 'completed' }, 'get');
      const other = c.ref();
      const marked = await c.acquire(other);
      const error = { type: 'T'.repeat(256), message: 'm'.repeat(4096) };
      same(
        await c.store.markIndeterminate(other, marked.holder, error, MAX_RETENTION_MS),
        { status: 'marked' },
        'mark',
      );
      same((await c.store.get(other))?.error, error, 'the longest error');
    },
    60_000,
  );

  add(
    'S2: outcomes are byte-exact (NUL, astral, non-ASCII, 1 MB); lone surrogates are refused',
    async (c) => {
      const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024), end: 'é𝄞' });
      const texts = [
        'a\u0000b',
        '\u0000',
        '"\\u0000 escaped control"',
        '𝄞😀👩🏽‍💻🎉',
        JSON.stringify({ name: 'Zoë Ångström', city: '東京', rtl: 'שלום', nfd: 'e\u0301', nfc: 'é' }),
        '\uFEFF\u2028\u2029\r\n\t',
        '',
        big,
      ];
      const checks: [string, () => Promise<unknown>][] = texts.map((text) => [
        show(text),
        async () => {
          const ref = c.ref();
          const { holder } = await c.acquire(ref);
          same(
            await c.store.complete(ref, holder, text, DAY_MS),
            { status: 'completed' },
            `complete ${show(text)}`,
          );
          const replay = await c.store.claim(ref, c.options());
          if (replay.status !== 'completed') fail(`expected completed, got ${show(replay)}`);
          equal(replay.record.outcome?.length, text.length, `length of ${show(text)} from a repeat claim`);
          ok(replay.record.outcome === text, `${show(text)} came back changed from a repeat claim`);
          ok((await c.store.get(ref))?.outcome === text, `${show(text)} came back changed from get`);
          // An operator's outcome too.
          const resolved = c.ref();
          const byHolder = await c.acquire(resolved, { mode: 'at-most-once' });
          await c.store.markIndeterminate(resolved, byHolder.holder, { type: 'E', message: 'm' }, DAY_MS);
          same(await c.store.resolve(resolved, { outcome: text }, DAY_MS), { status: 'resolved' }, 'resolve');
          ok(
            (await c.store.get(resolved))?.outcome === text,
            `${show(text)} came back changed after resolve`,
          );
        },
      ]);
      checks.push([
        'recorded error',
        async () => {
          const error = { type: 'Ошибка𝄞', message: 'délai dépassé: 東京 😀 \u2028' };
          const marked = c.ref();
          const byHolder = await c.acquire(marked);
          await c.store.markIndeterminate(marked, byHolder.holder, error, DAY_MS);
          same((await c.store.get(marked))?.error, error, 'recorded error');
        },
      ]);
      checks.push([
        'lone surrogate',
        async () => {
          const refused = c.ref();
          const refusedBy = await c.acquire(refused);
          await rejects(
            () => c.store.complete(refused, refusedBy.holder, '{"a":"\uD83D"}', DAY_MS),
            isInputError,
            'lone surrogate',
          );
          fields(await c.store.get(refused), { state: 'in_progress' }, 'record after the refused outcome');
        },
      ]);
      await everyOf(checks);
    },
  );

  add(
    'S3: an in_progress record is kept a retention window past its lease, and renew pushes both',
    async (c) => {
      const L = c.leaseMs;
      const retentionMs = L * 8;
      const ref = c.ref();
      const first = await c.acquire(ref, { leaseMs: L, retentionMs });
      const claimed = await c.store.get(ref);
      ok(
        (claimed?.expiresAtMs ?? 0) >= first.result.leaseExpiresAtMs + retentionMs,
        `expiresAtMs ${claimed?.expiresAtMs} < leaseExpiresAtMs ${first.result.leaseExpiresAtMs} + retentionMs ${retentionMs}`,
      );
      const renewSentAtMs = performance.now();
      const renewed = await c.store.renew(ref, first.holder, L * 2);
      if (renewed.status !== 'renewed') fail(`expected renewed, got ${show(renewed)}`);
      const afterRenew = await c.store.get(ref);
      equal(afterRenew?.leaseExpiresAtMs, renewed.leaseExpiresAtMs, 'lease after renew');
      ok(
        (afterRenew?.expiresAtMs ?? 0) >= renewed.leaseExpiresAtMs + retentionMs,
        `after renew: expiresAtMs ${afterRenew?.expiresAtMs} < leaseExpiresAtMs ${renewed.leaseExpiresAtMs} + ${retentionMs}`,
      );
      // Past the lease, within the retention window: the lost holder is still on record, so the
      // next claim is a takeover (fence 2), never a fresh claim of a free key (fence 1).
      await sleep(L * 2 + c.expireMs - L);
      await whileWithin(renewSentAtMs, L * 2 + retentionMs, async () => {
        fields(await c.store.get(ref), { state: 'in_progress', fence: 1 }, 'get past the lease');
        fields(
          (await c.acquire(ref, { leaseMs: L, retentionMs })).result,
          { fence: 2, takeover: true },
          'claim past the lease',
        );
      });
    },
  );

  add('S3: a settled record lives retentionMs from when it settled, not from the claim', async (c) => {
    const L = c.leaseMs;
    const retentionMs = L * 8;
    const ref = c.ref();
    const first = await c.acquire(ref, { leaseMs: L * 40, retentionMs });
    const claimedAtMs = first.result.leaseExpiresAtMs - L * 40;
    await sleep(L * 6);
    const settleSentAtMs = performance.now();
    const settled = await c.store.complete(ref, first.holder, '"done"', retentionMs);
    equal(settled.status, 'completed', 'complete');
    const record = await c.store.get(ref);
    ok(
      (record?.expiresAtMs ?? 0) >= claimedAtMs + L * 6 + retentionMs - 5,
      `expiresAtMs ${record?.expiresAtMs} is before settle + retentionMs (claim at ${claimedAtMs} + ${L * 6} + ${retentionMs})`,
    );
    // Past claim + retentionMs, within settle + retentionMs.
    await sleep(L * 4);
    await whileWithin(settleSentAtMs, retentionMs, async () => {
      fields(
        await c.store.get(ref),
        { state: 'completed', outcome: '"done"' },
        'get within retention of the settle',
      );
    });
  });

  add('S4: the longest lease and retention round-trip exactly (integers, no rounding)', async (c) => {
    const ref = c.ref();
    const { result, holder } = await c.acquire(ref, { leaseMs: MAX_TIMER_MS, retentionMs: MAX_RETENTION_MS });
    const busy = await c.store.claim(ref, c.options());
    if (busy.status !== 'busy') fail(`expected busy, got ${show(busy)}`);
    for (const [name, value] of [
      ['leaseExpiresAtMs', result.leaseExpiresAtMs],
      ['record.leaseExpiresAtMs', busy.record.leaseExpiresAtMs],
      ['record.expiresAtMs', busy.record.expiresAtMs],
      ['nowMs', busy.nowMs],
    ] as const) {
      ok(Number.isSafeInteger(value), `${name} is not a safe integer: ${value}`);
    }
    equal(busy.record.leaseExpiresAtMs, result.leaseExpiresAtMs, 'lease deadline as claimed and as read');
    const remainingMs = busy.record.leaseExpiresAtMs - busy.nowMs;
    ok(
      remainingMs <= MAX_TIMER_MS && remainingMs > MAX_TIMER_MS - 60_000,
      `lease remaining ${remainingMs} ms`,
    );
    ok(
      busy.record.expiresAtMs >= busy.record.leaseExpiresAtMs + MAX_RETENTION_MS,
      `expiresAtMs ${busy.record.expiresAtMs} < lease ${busy.record.leaseExpiresAtMs} + ${MAX_RETENTION_MS}`,
    );
    const read = busy.record;
    fields(
      await c.store.get(ref),
      {
        leaseExpiresAtMs: read.leaseExpiresAtMs,
        expiresAtMs: read.expiresAtMs,
        fence: 1,
        state: 'in_progress',
      },
      'get agrees with the busy claim',
    );
    const renewed = await c.store.renew(ref, holder, MAX_TIMER_MS);
    if (renewed.status !== 'renewed') fail(`expected renewed, got ${show(renewed)}`);
    equal((await c.store.get(ref))?.leaseExpiresAtMs, renewed.leaseExpiresAtMs, 'renewed deadline as read');
    await c.store.complete(ref, holder, '"x"', MAX_RETENTION_MS);
    const settled = await c.store.get(ref);
    ok(Number.isSafeInteger(settled?.expiresAtMs), `settled expiresAtMs ${settled?.expiresAtMs}`);
    ok(
      (settled?.expiresAtMs ?? 0) >= busy.nowMs + MAX_RETENTION_MS,
      `settled expiresAtMs ${settled?.expiresAtMs} < ${busy.nowMs} + ${MAX_RETENTION_MS}`,
    );
  });

  add(
    'S6: a wait woken by lease expiry is followed by a claim that is not busy (tight loop)',
    async (c) => {
      const chains = 24;
      await c.inRounds(async (chain) => {
        for (let step = 0; step < 3; step++) {
          const ref = c.ref();
          // Leases of uneven lengths, so wake-ups fall on every part of a millisecond.
          const leaseMs = Math.max(5, Math.round(c.leaseMs / 4)) + ((chain * 3 + step) % 7);
          await c.acquire(ref, { leaseMs }, c.racer(chain));
          const woken = await c.racer(chain + 1).waitForSettle(ref, { timeoutMs: c.wakeTimeoutMs });
          equal(woken, 'lease_expired', `chain ${chain} step ${step}: wait`);
          const claim = await c.racer(chain + 2).claim(ref, c.options());
          if (claim.status !== 'acquired') {
            fail(
              `chain ${chain} step ${step}: the claim after a lease_expired wake-up answered ${show(claim)}`,
            );
          }
          fields(claim, { fence: 2, takeover: true }, `chain ${chain} step ${step}: takeover`);
        }
      }, chains);
    },
    60_000,
  );

  if (options.createUnavailableStore !== undefined) {
    const createUnavailable = options.createUnavailableStore;
    add('S7: a store that is down throws StoreUnavailableError from every operation', async (c) => {
      const down = await createUnavailable();
      try {
        const ref = c.ref();
        const holder = { fence: 1, owner: 'owner-1' };
        const operations: [string, () => Promise<unknown>][] = [
          ['claim', () => down.claim(ref, c.options())],
          ['claim at-most-once', () => down.claim(ref, c.options({ mode: 'at-most-once' }))],
          ['renew', () => down.renew(ref, holder, 1000)],
          ['complete', () => down.complete(ref, holder, '1', DAY_MS)],
          ['release', () => down.release(ref, holder)],
          [
            'markIndeterminate',
            () => down.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS),
          ],
          ['get', () => down.get(ref)],
          ['resolve', () => down.resolve(ref, { released: true }, DAY_MS)],
          ['resolve with an outcome', () => down.resolve(ref, { outcome: '"x"' }, DAY_MS)],
          ['forget', () => down.forget({ tenant: ref.tenant })],
          ['waitForSettle', () => down.waitForSettle(ref, { timeoutMs: 1000 })],
        ];
        for (const [operation, call] of operations) {
          await rejects(
            call,
            (error) => StoreUnavailableError.isInstance(error),
            `${operation} on a store that is down`,
          );
        }
      } finally {
        await down.close().catch(() => undefined);
      }
    });
  }

  if (options.createFrozenStore !== undefined) {
    const createFrozen = options.createFrozenStore;
    const deadlineMs = options.frozenOperationTimeoutMs ?? 5000;
    const waitMs = 1000;
    add(
      'S5: a store whose backend stops answering rejects every operation with StoreUnavailableError within its deadline',
      async (c) => {
        const frozen = await createFrozen();
        try {
          const ref = c.ref();
          const holder = { fence: 1, owner: 'owner-1' };
          const operations: [string, () => Promise<unknown>][] = [
            ['claim', () => frozen.claim(ref, c.options())],
            ['renew', () => frozen.renew(ref, holder, 1000)],
            ['complete', () => frozen.complete(ref, holder, '1', DAY_MS)],
            ['release', () => frozen.release(ref, holder)],
            [
              'markIndeterminate',
              () => frozen.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS),
            ],
            ['get', () => frozen.get(ref)],
            ['resolve', () => frozen.resolve(ref, { released: true }, DAY_MS)],
            ['forget', () => frozen.forget({ tenant: ref.tenant })],
            ['waitForSettle', () => frozen.waitForSettle(ref, { timeoutMs: waitMs })],
          ];
          // All at once: a store that serialises its operations behind one stuck one fails too.
          await Promise.all(
            operations.map(async ([operation, call]) => {
              const startedMs = performance.now();
              await rejects(
                call,
                (error) => StoreUnavailableError.isInstance(error),
                `${operation} on a store whose backend stopped answering`,
              );
              const tookMs = performance.now() - startedMs;
              // Generous: the deadline (twice, for a store that retries once) plus scheduling slack;
              // waitForSettle may also spend its own timeout.
              const boundMs = 2 * deadlineMs + 1000 + (operation === 'waitForSettle' ? waitMs : 0);
              ok(tookMs <= boundMs, `${operation} took ${Math.round(tookMs)} ms (bound ${boundMs} ms)`);
            }),
          );
        } finally {
          await Promise.race([
            frozen.close().catch(() => undefined),
            new Promise((r) => setTimeout(r, 1000)),
          ]);
        }
      },
      2 * deadlineMs + waitMs + 10_000,
    );
  }

  addOperatorCases(add);
  return cases;
}
