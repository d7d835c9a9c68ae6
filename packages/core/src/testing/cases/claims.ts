// Conformance cases: claims, holders and leases (one holder per key, fences, takeover at-least-once,
// indeterminate at-most-once, renew, maxAttempts).
import { equal, fail, fields, ok, same, show } from '../check.js';
import { checkLeaseExpiredError, statusesOf } from './case-checks.js';
import {
  type CaseDefinition,
  DAY_MS,
  defineCase,
  LONG_LEASE_MS,
  sleep,
  whileWithin,
} from './case-context.js';

export const claimCases: readonly CaseDefinition[] = [
  defineCase(
    '50 concurrent claims of one key: exactly one acquired, the rest busy (20 rounds)',
    async (c) => {
      for (let round = 0; round < 20; round++) {
        const ref = c.ref();
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, index) => c.racer(index).claim(ref, c.options())),
        );
        same(statusesOf(results), { acquired: 1, busy: 49 }, `round ${round}`);
      }
    },
  ),

  defineCase('a new claim gets fence 1, attempt 1 and a lease in the future', async (c) => {
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
  }),

  defineCase('a claim resent by its own owner (reply lost) is acquired again, not busy', async (c) => {
    const ref = c.ref();
    const first = await c.acquire(ref, { leaseMs: 10_000 });
    const resent = await c.store.claim(ref, first.opts);
    fields(resent, { status: 'acquired', fence: 1, attempt: 1, takeover: false }, 'resent claim');
    equal((await c.store.claim(ref, c.options())).status, 'busy', 'a claim by another owner');
    same(await c.store.complete(ref, first.holder, '"once"', DAY_MS), { status: 'completed' }, 'complete');
    equal((await c.store.claim(ref, first.opts)).status, 'completed', 'the resent claim after complete');
  }),

  defineCase('a claim of a busy key reports the holder and the store clock', async (c) => {
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
  }),

  defineCase(
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
  ),

  defineCase('complete with a superseded fence changes nothing and reports stale', async (c) => {
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
  }),

  defineCase('the same fence from an earlier life of the key is stale (owner is checked)', async (c) => {
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
  }),

  defineCase('the current owner with another fence is refused (fence is checked)', async (c) => {
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
  }),

  defineCase('an expired lease is taken over at-least-once with a higher fence', async (c) => {
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
  }),

  defineCase('an expired lease becomes indeterminate at-most-once, never re-run', async (c) => {
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
  }),

  defineCase('renew extends a live lease and fails after a takeover', async (c) => {
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
  }),

  defineCase('maxAttempts lost attempts give abandoned', async (c) => {
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
  }),
];
