// Conformance cases of resolving an `in_progress` record: a holder whose lease is live
// may still take effect, so an operator's resolve is `holder_alive` unless forced with a reason
// (kept in the entry, `forced: true`); a holder whose lease expired is gone, and its record is
// settleable on the holder the operator read (`expect`), in the same atomic step as the lease check.
// And every record reports the retention its call was claimed with, which an operator's
// resolution keeps unless the operator gives another (the guard passes it).
import { StoreInputError } from '../../errors/store-input-error.js';
import { equal, fields, ok, rejects, same, show } from '../check.js';
import { type CaseDefinition, DAY_MS, defineCase, sleep } from './case-context.js';
import { listOf, resolutionsOf } from './operator-support.js';
import { raceTimeoutMs } from './race-support.js';

export const liveHolderCases: readonly CaseDefinition[] = [
  defineCase(
    'resolve of an in_progress record whose lease is live is holder_alive (nothing changed) unless forced with a reason',
    async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref, { mode: 'at-most-once' });
      const before = await c.store.get(ref);
      for (const resolution of [
        { released: true as const, reason: 'nothing at the provider', expect: holder },
        { outcome: '"paid"', expect: holder },
        { released: true as const },
      ]) {
        same(
          await c.store.resolve(ref, resolution, DAY_MS),
          { status: 'holder_alive', record: before },
          `resolve ${show(resolution)}`,
        );
      }
      same(await c.store.get(ref), before, 'the record after');
      same(await resolutionsOf(c.store)(ref), [], 'no resolution entry');
      await rejects(
        () => c.store.resolve(ref, { released: true, force: true, expect: holder }, DAY_MS),
        (error) => StoreInputError.isInstance(error),
        'a forced resolve without a reason',
      );
      // The holder still renews: it is the holder.
      equal((await c.store.renew(ref, holder, 30_000)).status, 'renewed', 'renew after the refusals');
      same(
        await c.store.resolve(
          ref,
          {
            outcome: '"paid"',
            force: true,
            by: 'oncall',
            reason: 'worker hung, provider paid',
            expect: holder,
          },
          DAY_MS,
        ),
        { status: 'resolved' },
        'a forced resolve',
      );
      const record = await c.store.get(ref);
      fields(record, { state: 'completed', outcome: '"paid"', fence: 1, owner: holder.owner }, 'resolved');
      fields(
        record?.resolution,
        { action: 'completed', fromState: 'in_progress', forced: true, reason: 'worker hung, provider paid' },
        'its resolution entry',
      );
      const [entry] = await resolutionsOf(c.store)(ref);
      fields(
        entry,
        { fromState: 'in_progress', forced: true, by: 'oncall', reason: 'worker hung, provider paid' },
        'the journal',
      );
      // The holder lost its claim: its renewal and its late outcome are refused.
      equal((await c.store.renew(ref, holder, 30_000)).status, 'lost', 'renew after the forced resolve');
      equal((await c.store.complete(ref, holder, '"late"', DAY_MS)).status, 'stale', 'complete after it');
    },
  ),

  defineCase(
    'an in_progress record whose lease expired (holder gone) is resolved on the holder read; another holder is changed',
    async (c) => {
      const ref = c.ref();
      const { holder } = await c.acquire(ref, { leaseMs: c.leaseMs, mode: 'at-most-once' });
      await sleep(c.expireMs);
      const before = await c.store.get(ref);
      fields(before, { state: 'in_progress', fence: 1 }, 'the expired record');
      same(
        await c.store.resolve(ref, { released: true, expect: { fence: 1, owner: 'someone-else' } }, DAY_MS),
        { status: 'changed', record: before },
        'another owner',
      );
      same(
        await c.store.resolve(
          ref,
          { released: true, by: 'oncall', reason: 'worker killed', expect: holder },
          DAY_MS,
        ),
        { status: 'resolved' },
        'release with the holder read',
      );
      equal(await c.store.get(ref), null, 'released');
      const [entry] = await resolutionsOf(c.store)(ref);
      fields(
        entry,
        { action: 'released', fromState: 'in_progress', fence: 1, reason: 'worker killed' },
        'the journal',
      );
      equal(entry?.forced, undefined, 'not forced: the lease had expired');
      equal((await c.store.complete(ref, holder, '"late"', DAY_MS)).status, 'not_found', 'the gone holder');

      const other = c.ref();
      const gone = await c.acquire(other, { leaseMs: c.leaseMs });
      await sleep(c.expireMs);
      same(
        await c.store.resolve(other, { outcome: '"refunded"', expect: gone.holder }, DAY_MS),
        { status: 'resolved' },
        'an outcome for the gone holder',
      );
      fields(await c.store.get(other), { state: 'completed', outcome: '"refunded"' }, 'completed');
      equal((await c.store.claim(other, c.options())).status, 'completed', 'a later claim replays');
    },
  ),

  defineCase('get and claim report the retention the call was claimed with (retentionMs)', async (c) => {
    const ref = c.ref();
    const retentionMs = 7 * DAY_MS;
    const { holder } = await c.acquire(ref, { retentionMs, mode: 'at-most-once' });
    fields(await c.store.get(ref), { state: 'in_progress', retentionMs }, 'in progress');
    await c.store.markIndeterminate(ref, holder, { type: 'Timeout', message: 't' }, retentionMs);
    fields(await c.store.get(ref), { state: 'indeterminate', retentionMs }, 'indeterminate');
    const claim = await c.store.claim(ref, c.options({ retentionMs, mode: 'at-most-once' }));
    if (claim.status !== 'indeterminate') throw new Error(`expected indeterminate, got ${show(claim)}`);
    equal(claim.record.retentionMs, retentionMs, "the claim's record");
    const page = await listOf(c.store)({ tenant: ref.tenant, states: ['indeterminate'], limit: 10 });
    equal(page.records.find((record) => record.key === ref.key)?.retentionMs, retentionMs, 'listed');
    const before = await c.store.get(ref);
    same(
      await c.store.resolve(ref, { outcome: '"paid"', expect: holder }, retentionMs),
      { status: 'resolved' },
      'resolve',
    );
    const after = await c.store.get(ref);
    fields(after, { state: 'completed', retentionMs }, 'resolved');
    ok(
      (after?.expiresAtMs ?? 0) - (before?.updatedAtMs ?? 0) >= retentionMs - 60_000,
      `kept for the retention given (${show(after)})`,
    );
  }),

  defineCase('a record says which codec wrote its life (codec), also after it settles', async (c) => {
    const ref = c.ref();
    const { holder } = await c.acquire(ref, { codec: 'superjson', mode: 'at-most-once' });
    fields(await c.store.get(ref), { state: 'in_progress', codec: 'superjson' }, 'in progress');
    await c.store.markIndeterminate(ref, holder, { type: 'Timeout', message: 't' }, DAY_MS);
    const claim = await c.store.claim(ref, c.options({ codec: 'json', mode: 'at-most-once' }));
    if (claim.status !== 'indeterminate') throw new Error(`expected indeterminate, got ${show(claim)}`);
    equal(claim.record.codec, 'superjson', "the claim's record keeps the codec of the life");
    const page = await listOf(c.store)({ tenant: ref.tenant, states: ['indeterminate'], limit: 10 });
    equal(page.records.find((record) => record.key === ref.key)?.codec, 'superjson', 'listed');
    same(
      await c.store.resolve(ref, { outcome: '"x"', expect: holder }, DAY_MS),
      { status: 'resolved' },
      'resolve',
    );
    fields(await c.store.get(ref), { state: 'completed', codec: 'superjson' }, 'resolved');
    const plain = c.ref();
    await c.acquire(plain);
    equal((await c.store.get(plain))?.codec, undefined, 'a claim without a codec records none');
  }),

  defineCase(
    'race: an operator settles an expired in_progress record while a claimer takes it over: exactly one wins',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const { holder } = await c.acquire(ref, { leaseMs: c.leaseMs });
        await sleep(c.expireMs);
        const [resolved, claim] = await Promise.all([
          c.racer(round).resolve(ref, { outcome: '"by the operator"', expect: holder }, DAY_MS),
          c.racer(round + 1).claim(ref, c.options()),
        ]);
        if (resolved.status === 'resolved') {
          equal(claim.status, 'completed', `the claim after the resolve (${show(claim)})`);
        } else {
          equal(resolved.status, 'changed', `the resolve after the takeover (${show(resolved)})`);
          ok(claim.status === 'acquired' && claim.takeover, `the takeover (${show(claim)})`);
        }
      });
    },
    raceTimeoutMs,
  ),
];
