/**
 * `@toolfence/core/testing`: the conformance suite every idempotency store must pass, ours or a
 * user's own. Register it in a vitest test file:
 *
 * ```ts
 * import { describeStoreConformance } from '@toolfence/core/testing';
 * describeStoreConformance('MyStore', () => new MyStore(...), {
 *   createUnavailableStore: () => new MyStore({ url: 'unreachable' }),
 * });
 * ```
 *
 * Time-dependent cases use short real leases (a remote store's clock is real), so the suite
 * runs in seconds.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import type {
  ClaimOptions,
  ClaimResult,
  Holder,
  IdempotencyStore,
  RecordRef,
} from '../store/idempotency-store.js';

export interface StoreConformanceOptions {
  /**
   * A store that cannot reach its backend (a closed port, a stopped server). Every operation must
   * reject with `StoreUnavailableError`. Strongly recommended: without it that case is not run.
   */
  readonly createUnavailableStore?: () => IdempotencyStore | Promise<IdempotencyStore>;
  /** Called once after the suite with the store, before `close()`: drop test data. */
  readonly cleanup?: (store: IdempotencyStore) => Promise<void>;
  /** Lease of the time-dependent cases, in milliseconds. Default 150. */
  readonly leaseMs?: number;
}

type Factory = () => IdempotencyStore | Promise<IdempotencyStore>;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const DAY_MS = 86_400_000;

/**
 * Register the conformance tests of the store contract (the `IdempotencyStore` interface;
 * docs/design.md in the repository, "Store contract") for the store `createStore` makes. One store is created for the suite; every case uses its own tenant
 * and keys, so the store may be shared with other data.
 */
export function describeStoreConformance(
  name: string,
  createStore: Factory,
  options: StoreConformanceOptions = {},
): void {
  const leaseMs = options.leaseMs ?? 150;

  describe(`${name} conforms to the idempotency store contract`, () => {
    let store: IdempotencyStore;
    const runTenant = `conformance-${hex(4)}`;
    let counter = 0;

    beforeAll(async () => {
      store = await createStore();
    });
    afterAll(async () => {
      if (store === undefined) return;
      await options.cleanup?.(store);
      await store.close();
    });

    const fresh = (): RecordRef => ({ tenant: `${runTenant}-${++counter}`, key: hex(32) });
    const claimOptions = (overrides: Partial<ClaimOptions> = {}): ClaimOptions => ({
      tool: 'refund',
      fingerprint: 'f'.repeat(64),
      owner: `owner-${hex(6)}`,
      leaseMs: 30_000,
      retentionMs: DAY_MS,
      mode: 'at-least-once',
      maxAttempts: 3,
      checkFingerprint: false,
      ...overrides,
    });
    async function acquire(ref: RecordRef, overrides: Partial<ClaimOptions> = {}) {
      const opts = claimOptions(overrides);
      const result = await store.claim(ref, opts);
      expect(result.status).toBe('acquired');
      const acquired = result as Extract<ClaimResult, { status: 'acquired' }>;
      return { holder: { fence: acquired.fence, owner: opts.owner } as Holder, result: acquired, opts };
    }

    it('50 concurrent claims of one key: exactly one acquired, the rest busy (20 rounds)', async () => {
      for (let round = 0; round < 20; round++) {
        const ref = fresh();
        const results = await Promise.all(Array.from({ length: 50 }, () => store.claim(ref, claimOptions())));
        const statuses = results.map((r) => r.status);
        expect(statuses.filter((s) => s === 'acquired')).toHaveLength(1);
        expect(statuses.filter((s) => s === 'busy')).toHaveLength(49);
      }
    });

    it('a new claim gets fence 1, attempt 1 and a lease in the future', async () => {
      const ref = fresh();
      const { result, opts } = await acquire(ref, { leaseMs: 10_000 });
      expect(result).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
      const record = await store.get(ref);
      expect(record).toMatchObject({
        key: ref.key,
        tenant: ref.tenant,
        tool: 'refund',
        fingerprint: opts.fingerprint,
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: opts.owner,
      });
      expect(record?.leaseExpiresAtMs).toBe(result.leaseExpiresAtMs);
      expect(record?.outcome).toBeUndefined();
      expect((record?.expiresAtMs ?? 0) >= result.leaseExpiresAtMs).toBe(true);
    });

    it('a claim resent by its own owner (reply lost) is acquired again, not busy', async () => {
      const ref = fresh();
      const first = await acquire(ref, { leaseMs: 10_000 });
      const resent = await store.claim(ref, first.opts);
      expect(resent).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
      expect((await store.claim(ref, claimOptions())).status).toBe('busy');
      expect(await store.complete(ref, first.holder, '"once"', DAY_MS)).toEqual({ status: 'completed' });
      const after = await store.claim(ref, first.opts);
      expect(after.status).toBe('completed');
    });

    it('a claim of a busy key reports the holder and the store clock', async () => {
      const ref = fresh();
      const { result, opts } = await acquire(ref, { leaseMs: 10_000 });
      const busy = await store.claim(ref, claimOptions());
      expect(busy.status).toBe('busy');
      if (busy.status !== 'busy') return;
      expect(busy.record).toMatchObject({ fence: 1, attempt: 1, owner: opts.owner, state: 'in_progress' });
      expect(busy.record.leaseExpiresAtMs).toBe(result.leaseExpiresAtMs);
      const remainingMs = busy.record.leaseExpiresAtMs - busy.nowMs;
      expect(remainingMs > 0 && remainingMs <= 10_000).toBe(true);
    });

    it('a replay after complete returns the recorded outcome', async () => {
      const ref = fresh();
      const { holder } = await acquire(ref);
      expect(await store.complete(ref, holder, '{"refundId":"r-1"}', DAY_MS)).toEqual({
        status: 'completed',
      });
      const replay = await store.claim(ref, claimOptions());
      expect(replay.status).toBe('completed');
      if (replay.status !== 'completed') return;
      expect(replay.record).toMatchObject({ state: 'completed', outcome: '{"refundId":"r-1"}', fence: 1 });
      expect(replay.record.error).toBeUndefined();
    });

    it('complete with a superseded fence changes nothing and reports stale', async () => {
      const ref = fresh();
      const first = await acquire(ref, { leaseMs });
      await sleep(leaseMs + 50);
      const second = await acquire(ref, { leaseMs: 10_000 });
      expect(second.result).toMatchObject({ fence: 2, attempt: 2, takeover: true });
      const stale = await store.complete(ref, first.holder, '"late"', DAY_MS);
      expect(stale.status).toBe('stale');
      if (stale.status === 'stale') expect(stale.record).toMatchObject({ state: 'in_progress', fence: 2 });
      expect(await store.get(ref)).toMatchObject({
        state: 'in_progress',
        fence: 2,
        owner: second.opts.owner,
      });
      expect(await store.complete(ref, second.holder, '"winner"', DAY_MS)).toEqual({ status: 'completed' });
      expect(await store.complete(ref, first.holder, '"later"', DAY_MS)).toMatchObject({ status: 'stale' });
      expect(await store.get(ref)).toMatchObject({ state: 'completed', outcome: '"winner"', fence: 2 });
    });

    it('the same fence from an earlier life of the key is stale (owner is checked)', async () => {
      const ref = fresh();
      const first = await acquire(ref);
      expect(await store.release(ref, first.holder)).toEqual({ status: 'released' });
      const second = await acquire(ref);
      expect(second.result.fence).toBe(1);
      expect(await store.complete(ref, first.holder, '"ghost"', DAY_MS)).toMatchObject({ status: 'stale' });
      expect(await store.renew(ref, first.holder, 10_000)).toEqual({ status: 'lost', reason: 'stale' });
      expect(await store.release(ref, first.holder)).toMatchObject({ status: 'stale' });
      expect(await store.get(ref)).toMatchObject({ state: 'in_progress', owner: second.opts.owner });
    });

    it('an expired lease is taken over at-least-once with a higher fence', async () => {
      const ref = fresh();
      await acquire(ref, { leaseMs });
      expect((await store.claim(ref, claimOptions())).status).toBe('busy');
      await sleep(leaseMs + 50);
      const takeover = await acquire(ref);
      expect(takeover.result).toMatchObject({ fence: 2, attempt: 2, takeover: true });
      expect(await store.get(ref)).toMatchObject({ owner: takeover.opts.owner, fence: 2, attempt: 2 });
    });

    it('an expired lease becomes indeterminate at-most-once, never re-run', async () => {
      const ref = fresh();
      const first = await acquire(ref, { leaseMs, mode: 'at-most-once' });
      await sleep(leaseMs + 50);
      const claim = await store.claim(ref, claimOptions({ mode: 'at-most-once' }));
      expect(claim.status).toBe('indeterminate');
      if (claim.status !== 'indeterminate') return;
      expect(claim.record).toMatchObject({ state: 'indeterminate', fence: 1, attempt: 1 });
      expect(claim.record.error).toEqual({
        type: 'LeaseExpired',
        message:
          'the lease of attempt 1 expired before its outcome was recorded; the effect may have happened',
      });
      expect((await store.claim(ref, claimOptions({ mode: 'at-most-once' }))).status).toBe('indeterminate');
      expect((await store.claim(ref, claimOptions({ mode: 'at-least-once' }))).status).toBe('indeterminate');
      // The lost holder may still state its outcome: the late truth beats "unknown".
      expect(await store.complete(ref, first.holder, '"it happened"', DAY_MS)).toEqual({
        status: 'completed',
      });
      expect(await store.get(ref)).toMatchObject({ state: 'completed', outcome: '"it happened"' });
    });

    it('renew extends a live lease and fails after a takeover', async () => {
      const ref = fresh();
      const first = await acquire(ref, { leaseMs: leaseMs * 2 });
      const renewed = await store.renew(ref, first.holder, leaseMs * 6);
      expect(renewed.status).toBe('renewed');
      if (renewed.status === 'renewed')
        expect(renewed.leaseExpiresAtMs > first.result.leaseExpiresAtMs).toBe(true);
      await sleep(leaseMs * 2 + 50);
      expect((await store.claim(ref, claimOptions())).status).toBe('busy');
      await sleep(leaseMs * 4);
      const second = await acquire(ref);
      expect(second.result.fence).toBe(2);
      expect(await store.renew(ref, first.holder, 10_000)).toEqual({ status: 'lost', reason: 'stale' });
      expect(await store.renew(ref, second.holder, 10_000)).toMatchObject({ status: 'renewed' });
      await store.complete(ref, second.holder, '1', DAY_MS);
      expect(await store.renew(ref, second.holder, 10_000)).toEqual({ status: 'lost', reason: 'settled' });
      expect(await store.renew(fresh(), second.holder, 10_000)).toEqual({
        status: 'lost',
        reason: 'not_found',
      });
    });

    it('maxAttempts lost attempts give abandoned', async () => {
      const ref = fresh();
      await acquire(ref, { leaseMs, maxAttempts: 2 });
      await sleep(leaseMs + 50);
      const second = await acquire(ref, { leaseMs, maxAttempts: 2 });
      expect(second.result.attempt).toBe(2);
      await sleep(leaseMs + 50);
      const third = await store.claim(ref, claimOptions({ maxAttempts: 2 }));
      expect(third.status).toBe('abandoned');
      if (third.status === 'abandoned') {
        expect(third.record).toMatchObject({ state: 'abandoned', attempt: 2, fence: 2 });
        expect(third.record.error).toEqual({
          type: 'LeaseExpired',
          message: 'the lease of attempt 2 expired and 2 attempt(s) were lost',
        });
      }
      expect((await store.claim(ref, claimOptions({ maxAttempts: 2 }))).status).toBe('abandoned');
    });

    it('release frees the key; a stale or missing release is reported', async () => {
      const ref = fresh();
      const first = await acquire(ref);
      expect(await store.release(ref, { fence: 1, owner: 'someone-else' })).toMatchObject({
        status: 'stale',
      });
      expect(await store.release(ref, first.holder)).toEqual({ status: 'released' });
      expect(await store.get(ref)).toBeNull();
      expect(await store.release(ref, first.holder)).toEqual({ status: 'not_found' });
      const again = await acquire(ref);
      expect(again.result).toMatchObject({ fence: 1, attempt: 1, takeover: false });
      await store.complete(ref, again.holder, '1', DAY_MS);
      expect(await store.release(ref, again.holder)).toMatchObject({ status: 'stale' });
      expect(await store.get(ref)).toMatchObject({ state: 'completed' });
    });

    it('a record is gone after its retention window and the key is free again', async () => {
      const ref = fresh();
      const { holder } = await acquire(ref, { leaseMs: 100, retentionMs: 300 });
      await store.complete(ref, holder, '"kept"', 300);
      expect((await store.claim(ref, claimOptions())).status).toBe('completed');
      await sleep(450);
      expect(await store.get(ref)).toBeNull();
      const again = await acquire(ref);
      expect(again.result).toMatchObject({ fence: 1, attempt: 1 });
    });

    it('tenants are isolated and forget erases only one tenant', async () => {
      const key = hex(32);
      const a = { tenant: `${runTenant}-a-${hex(3)}`, key };
      const b = { tenant: `${runTenant}-b-${hex(3)}`, key };
      const ha = await acquire(a);
      const hb = await acquire(b);
      await store.complete(a, ha.holder, '"a"', DAY_MS);
      await store.complete(b, hb.holder, '"b"', DAY_MS);
      const other = { tenant: a.tenant, key: hex(32) };
      await acquire(other);
      expect(await store.get(a)).toMatchObject({ outcome: '"a"' });
      expect(await store.get(b)).toMatchObject({ outcome: '"b"' });
      expect(await store.forget({ tenant: a.tenant })).toBe(2);
      expect(await store.get(a)).toBeNull();
      expect(await store.get(other)).toBeNull();
      expect(await store.get(b)).toMatchObject({ outcome: '"b"' });
      expect(await store.forget({ tenant: a.tenant })).toBe(0);
    });

    it('forget treats a tenant name literally (no glob or separator injection)', async () => {
      const base = `${runTenant}-glob-${hex(3)}`;
      const victims = [`${base}-x`, `${base}:y`, `${base}}z`];
      for (const tenant of victims) {
        const ref = { tenant, key: hex(32) };
        const { holder } = await acquire(ref);
        await store.complete(ref, holder, '1', DAY_MS);
      }
      for (const pattern of [`${base}*`, `${base}?x`, `${base}[-:]y`, `${base}%`, base]) {
        expect(await store.forget({ tenant: pattern })).toBe(0);
      }
      for (const tenant of victims) expect(await store.forget({ tenant })).toBe(1);
    });

    it('markIndeterminate keeps the claim; resolve settles it as completed or released', async () => {
      const ref = fresh();
      const { holder } = await acquire(ref, { mode: 'at-most-once' });
      const marked = await store.markIndeterminate(
        ref,
        holder,
        { type: 'ECONNRESET', message: 'socket hang up' },
        DAY_MS,
      );
      expect(marked).toEqual({ status: 'marked' });
      const claim = await store.claim(ref, claimOptions({ mode: 'at-most-once' }));
      expect(claim.status).toBe('indeterminate');
      if (claim.status === 'indeterminate') {
        expect(claim.record.error).toEqual({ type: 'ECONNRESET', message: 'socket hang up' });
      }
      expect(await store.markIndeterminate(ref, holder, { type: 'X', message: 'y' }, DAY_MS)).toMatchObject({
        status: 'stale',
      });
      expect(await store.resolve(ref, { outcome: '"verified"' }, DAY_MS)).toEqual({ status: 'resolved' });
      const replay = await store.claim(ref, claimOptions({ mode: 'at-most-once' }));
      expect(replay.status).toBe('completed');
      if (replay.status === 'completed') expect(replay.record.outcome).toBe('"verified"');
      expect(await store.resolve(ref, { released: true }, DAY_MS)).toMatchObject({
        status: 'not_resolvable',
      });

      const other = fresh();
      const second = await acquire(other, { mode: 'at-most-once' });
      expect(await store.resolve(other, { released: true }, DAY_MS)).toMatchObject({
        status: 'not_resolvable',
      });
      await store.markIndeterminate(other, second.holder, { type: 'Timeout', message: 't' }, DAY_MS);
      expect(await store.resolve(other, { released: true }, DAY_MS)).toEqual({ status: 'resolved' });
      expect(await store.get(other)).toBeNull();
      expect((await store.claim(other, claimOptions())).status).toBe('acquired');
      expect(await store.resolve(fresh(), { released: true }, DAY_MS)).toEqual({ status: 'not_found' });
    });

    it('an abandoned record can be resolved', async () => {
      const ref = fresh();
      await acquire(ref, { leaseMs, maxAttempts: 1 });
      await sleep(leaseMs + 50);
      expect((await store.claim(ref, claimOptions({ maxAttempts: 1 }))).status).toBe('abandoned');
      expect(await store.resolve(ref, { released: true }, DAY_MS)).toEqual({ status: 'resolved' });
      expect((await store.claim(ref, claimOptions())).status).toBe('acquired');
    });

    it('another tool, or another fingerprint when checked, is a conflict before any state', async () => {
      const ref = fresh();
      await acquire(ref, { checkFingerprint: true, fingerprint: 'a'.repeat(64) });
      const otherArgs = await store.claim(
        ref,
        claimOptions({ checkFingerprint: true, fingerprint: 'b'.repeat(64) }),
      );
      expect(otherArgs.status).toBe('conflict');
      if (otherArgs.status === 'conflict') expect(otherArgs.record.fingerprint).toBe('a'.repeat(64));
      const otherTool = await store.claim(ref, claimOptions({ tool: 'email', fingerprint: 'a'.repeat(64) }));
      expect(otherTool.status).toBe('conflict');
      if (otherTool.status === 'conflict') expect(otherTool.record.tool).toBe('refund');
      const sameArgs = await store.claim(
        ref,
        claimOptions({ checkFingerprint: true, fingerprint: 'a'.repeat(64) }),
      );
      expect(sameArgs.status).toBe('busy');
      const unchecked = await store.claim(ref, claimOptions({ fingerprint: 'b'.repeat(64) }));
      expect(unchecked.status).toBe('busy');
    });

    it('stores a 1 MB outcome and non-ASCII outcomes byte for byte', async () => {
      const big = JSON.stringify({ blob: 'x'.repeat(1024 * 1024), end: 'é' });
      const texts = [
        big,
        JSON.stringify({
          name: 'Zoë Ångström',
          city: '東京',
          emoji: '👩🏽‍💻🎉',
          rtl: 'שלום',
          nfd: 'e\u0301',
        }),
        '"\\u0000 escaped control"',
        '',
      ];
      for (const text of texts) {
        const ref = fresh();
        const { holder } = await acquire(ref);
        expect(await store.complete(ref, holder, text, DAY_MS)).toEqual({ status: 'completed' });
        const replay = await store.claim(ref, claimOptions());
        expect(replay.status).toBe('completed');
        if (replay.status === 'completed') {
          expect(replay.record.outcome?.length).toBe(text.length);
          expect(replay.record.outcome === text).toBe(true);
        }
      }
    });

    it('waitForSettle resolves at once for a settled or missing record', async () => {
      const ref = fresh();
      expect(await store.waitForSettle(ref, { timeoutMs: 5_000 })).toBe('settled');
      const { holder } = await acquire(ref);
      await store.complete(ref, holder, '1', DAY_MS);
      expect(await store.waitForSettle(ref, { timeoutMs: 5_000 })).toBe('settled');
    });

    for (const [event, settle] of [
      ['complete', (ref: RecordRef, holder: Holder) => store.complete(ref, holder, '"done"', DAY_MS)],
      ['release', (ref: RecordRef, holder: Holder) => store.release(ref, holder)],
      [
        'markIndeterminate',
        (ref: RecordRef, holder: Holder) =>
          store.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS),
      ],
    ] as const) {
      it(`waitForSettle wakes on ${event}`, async () => {
        const ref = fresh();
        const { holder } = await acquire(ref, { leaseMs: 20_000 });
        const started = Date.now();
        const waiting = store.waitForSettle(ref, { timeoutMs: 10_000 });
        await sleep(100);
        await settle(ref, holder);
        expect(await waiting).toBe('settled');
        expect(Date.now() - started).toBeLessThan(9_000);
      });
    }

    it('waitForSettle wakes when the lease expires', async () => {
      const ref = fresh();
      await acquire(ref, { leaseMs: 300 });
      expect(await store.waitForSettle(ref, { timeoutMs: 10_000 })).toBe('lease_expired');
      expect((await store.claim(ref, claimOptions())).status).toBe('acquired');
    });

    it('waitForSettle times out while the holder keeps a live lease', async () => {
      const ref = fresh();
      await acquire(ref, { leaseMs: 20_000 });
      expect(await store.waitForSettle(ref, { timeoutMs: 200 })).toBe('timeout');
    });

    it('many waiters on one key all wake on one settle', async () => {
      const ref = fresh();
      const { holder } = await acquire(ref, { leaseMs: 20_000 });
      const waiters = Array.from({ length: 100 }, () => store.waitForSettle(ref, { timeoutMs: 10_000 }));
      await sleep(100);
      await store.complete(ref, holder, '"done"', DAY_MS);
      expect(new Set(await Promise.all(waiters))).toEqual(new Set(['settled']));
    });

    if (options.createUnavailableStore !== undefined) {
      const createUnavailable = options.createUnavailableStore;
      it('a store that is down rejects with StoreUnavailableError', async () => {
        const down = await createUnavailable();
        try {
          const ref = fresh();
          const holder = { fence: 1, owner: 'o' };
          const operations: [string, () => Promise<unknown>][] = [
            ['claim', () => down.claim(ref, claimOptions())],
            ['renew', () => down.renew(ref, holder, 1000)],
            ['complete', () => down.complete(ref, holder, '1', DAY_MS)],
            ['release', () => down.release(ref, holder)],
            [
              'markIndeterminate',
              () => down.markIndeterminate(ref, holder, { type: 'E', message: 'm' }, DAY_MS),
            ],
            ['get', () => down.get(ref)],
            ['resolve', () => down.resolve(ref, { released: true }, DAY_MS)],
            ['forget', () => down.forget({ tenant: ref.tenant })],
            ['waitForSettle', () => down.waitForSettle(ref, { timeoutMs: 1000 })],
          ];
          for (const [operation, call] of operations) {
            const error = await call().then(
              () => new Error(`${operation} succeeded on a store that is down`),
              (e: unknown) => e,
            );
            expect(StoreUnavailableError.isInstance(error), `${operation}: ${String(error)}`).toBe(true);
          }
        } finally {
          await down.close().catch(() => undefined);
        }
      });
    }
  });
}
