// Conformance cases, rules S2-S6 of docs/store-contract.md: byte-exact outcomes, retention,
// exact durations, the store's clock, a claim after a lease-expiry wake-up.
import { MAX_RETENTION_MS, MAX_TIMER_MS } from '../../store/store-input.js';
import { equal, fail, fields, ok, rejects, same, show } from '../check.js';
import { everyOf, isInputError } from './case-checks.js';
import { type CaseDefinition, DAY_MS, defineCase, sleep, whileWithin } from './case-context.js';

export const storeRuleCases: readonly CaseDefinition[] = [
  defineCase(
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
  ),

  defineCase(
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
  ),

  defineCase('S3: a settled record lives retentionMs from when it settled, not from the claim', async (c) => {
    const L = c.leaseMs;
    const retentionMs = L * 8;
    const ref = c.ref();
    const claimSentAtMs = performance.now();
    const first = await c.acquire(ref, { leaseMs: L * 40, retentionMs });
    const claimedAtMs = first.result.leaseExpiresAtMs - L * 40;
    await sleep(L * 6);
    // The complete needs the lease still live: a loop stalled past it (a loaded machine) skips
    // the rest instead of failing a correct store. Sleeping longer only moves the settle later,
    // which the bound below allows.
    await whileWithin(claimSentAtMs, L * 40, async () => {
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
  }),

  defineCase('S4: the longest lease and retention round-trip exactly (integers, no rounding)', async (c) => {
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
  }),

  defineCase(
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
  ),
];
