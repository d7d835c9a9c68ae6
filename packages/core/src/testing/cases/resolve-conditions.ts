// Conformance cases of the conditional resolve (`resolution.expect`): an operator settles the
// record it looked at, or nothing. The holder compared is { fence, owner }: the fence tells apart
// attempts within one life of a key, the owner tells apart two lives (each starts at fence 1).
import { StoreInputError } from '../../errors/store-input-error.js';
import type { Holder, RecordRef, Resolution } from '../../store/idempotency-store.js';
import { equal, fields, ok, rejects, same, show } from '../check.js';
import { type CaseContext, type CaseDefinition, DAY_MS, defineCase, sleep } from './case-context.js';
import { indeterminate, resolutionsOf } from './operator-support.js';
import { raceTimeoutMs } from './race-support.js';

/** A resolve that must change nothing and answer `changed` with the record now under the key. */
async function refusedAsChanged(
  c: CaseContext,
  ref: RecordRef,
  resolution: Resolution,
  label: string,
): Promise<void> {
  const before = await c.store.get(ref);
  const entries = await resolutionsOf(c.store)(ref);
  const result = await c.store.resolve(ref, resolution, DAY_MS);
  same(result, { status: 'changed', record: before }, `${label}: the answer`);
  same(await c.store.get(ref), before, `${label}: the record after`);
  same(await resolutionsOf(c.store)(ref), entries, `${label}: the resolutions after`);
}

/** An at-least-once record taken over once (fence 2), then marked indeterminate by its holder. */
async function takenOverThenIndeterminate(c: CaseContext, ref: RecordRef) {
  const first = await c.acquire(ref, { leaseMs: c.leaseMs });
  await sleep(c.expireMs);
  const second = await c.acquire(ref);
  equal(second.result.fence, 2, `the takeover's fence ${show(second.result)}`);
  const marked = await c.store.markIndeterminate(
    ref,
    second.holder,
    { type: 'Timeout', message: 'm' },
    DAY_MS,
  );
  equal(marked.status, 'marked', 'markIndeterminate of the second attempt');
  return { first: first.holder, second: second.holder };
}

export const resolveConditionCases: readonly CaseDefinition[] = [
  defineCase(
    'resolve with a superseded fence changes nothing (changed); with the current holder it resolves',
    async (c) => {
      const ref = c.ref();
      const { first, second } = await takenOverThenIndeterminate(c, ref);
      await refusedAsChanged(c, ref, { outcome: '"old"', expect: first }, 'outcome, fence 1');
      await refusedAsChanged(c, ref, { released: true, expect: first }, 'released, fence 1');
      await refusedAsChanged(
        c,
        ref,
        { outcome: '"x"', expect: { fence: second.fence, owner: first.owner } },
        'the current fence with another owner',
      );
      for (const expect of [
        { fence: 0, owner: second.owner },
        { fence: 2, owner: '' },
        { fence: 1.5, owner: 'o' },
      ]) {
        await rejects(
          () => c.store.resolve(ref, { outcome: '"x"', expect }, DAY_MS),
          (error) => StoreInputError.isInstance(error),
          `resolve expecting ${show(expect)}`,
        );
      }
      same(
        await c.store.resolve(ref, { outcome: '"seen"', by: 'oncall', expect: second }, DAY_MS),
        { status: 'resolved' },
        'resolve with the current holder',
      );
      const record = await c.store.get(ref);
      fields(record, { state: 'completed', outcome: '"seen"', fence: 2, owner: second.owner }, 'resolved');
      fields(record?.resolution, { action: 'completed', fence: 2, by: 'oncall' }, 'its resolution entry');
      // The same holder, already settled by that resolution: the state answers.
      const again = await c.store.resolve(ref, { released: true, expect: second }, DAY_MS);
      fields(again, { status: 'not_resolvable' }, 'a second resolve with the same holder');
      equal((await resolutionsOf(c.store)(ref)).length, 1, 'one resolution entry');
    },
  ),

  defineCase(
    'resolve with the holder of an earlier life (released, claimed afresh at fence 1) changes nothing (changed)',
    async (c) => {
      const ref = c.ref();
      const old = await indeterminate(c, ref);
      same(
        await c.store.resolve(ref, { released: true, expect: old }, DAY_MS),
        { status: 'resolved' },
        'the first life released',
      );
      equal(await c.store.get(ref), null, 'released');
      same(
        await c.store.resolve(ref, { outcome: '"x"', expect: old }, DAY_MS),
        { status: 'not_found' },
        'gone',
      );
      // A new life, in progress: the holder is checked before the state.
      const live = await c.acquire(ref, { mode: 'at-most-once' });
      equal(live.holder.fence, old.fence, 'a new life starts at fence 1 again');
      await refusedAsChanged(c, ref, { outcome: '"old"', expect: old }, 'the new life in progress');
      const marked = await c.store.markIndeterminate(
        ref,
        live.holder,
        { type: 'Timeout', message: 'm' },
        DAY_MS,
      );
      equal(marked.status, 'marked', 'the new life marked indeterminate');
      // Same key, same fence, same state as what the operator saw: only the owner tells them apart.
      await refusedAsChanged(c, ref, { outcome: '"old"', expect: old }, 'outcome, the old life');
      await refusedAsChanged(c, ref, { released: true, expect: old }, 'released, the old life');
      same(
        await c.store.resolve(ref, { outcome: '"new"', expect: live.holder }, DAY_MS),
        { status: 'resolved' },
        'resolve with the new life holder',
      );
      fields(
        await c.store.get(ref),
        { state: 'completed', outcome: '"new"', owner: live.holder.owner },
        'get',
      );
    },
  ),

  defineCase(
    'race: two operators resolve one record with the same expected holder at once: exactly one resolves',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const seen = await indeterminate(c, ref);
        const resolutions: Resolution[] =
          round % 2 === 0
            ? [
                { outcome: '"operator-a"', expect: seen },
                { outcome: '"operator-b"', expect: seen },
              ]
            : [
                { released: true, expect: seen },
                { outcome: '"operator-b"', expect: seen },
              ];
        const results = await Promise.all(
          resolutions.map((resolution, index) => c.racer(index).resolve(ref, resolution, DAY_MS)),
        );
        const winners = results.flatMap((result, index) => (result.status === 'resolved' ? [index] : []));
        equal(winners.length, 1, `resolved answers (${show(results)})`);
        const winner = resolutions[winners[0] as number] as Resolution;
        const loser = results[1 - (winners[0] as number)];
        const record = await c.store.get(ref);
        if ('outcome' in winner) {
          equal(loser?.status, 'not_resolvable', 'the other resolve');
          fields(record, { state: 'completed', outcome: winner.outcome }, 'get');
        } else {
          equal(loser?.status, 'not_found', 'the other resolve');
          equal(record, null, 'get');
        }
        equal((await resolutionsOf(c.store)(ref)).length, 1, 'one resolution entry');
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: a resolve with the holder it saw, against a release and a new life marked indeterminate: the new life is never settled by it',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        const seen = await indeterminate(c, ref);
        const other = c.racer(round + 1);
        const relive = async (): Promise<Holder | undefined> => {
          await other.resolve(ref, { released: true, expect: seen }, DAY_MS);
          const opts = c.options({ mode: 'at-most-once' });
          const claim = await other.claim(ref, opts);
          if (claim.status !== 'acquired') return undefined;
          const holder = { fence: claim.fence, owner: opts.owner };
          await other.markIndeterminate(ref, holder, { type: 'Timeout', message: 'm' }, DAY_MS);
          return holder;
        };
        const [stale, newLife] = await Promise.all([
          c.racer(round).resolve(ref, { outcome: '"for the old call"', expect: seen }, DAY_MS),
          relive(),
        ]);
        const record = await c.store.get(ref);
        if (stale.status === 'resolved') {
          equal(newLife, undefined, `no new life after the old one was resolved (${show(record)})`);
          fields(record, { state: 'completed', owner: seen.owner, outcome: '"for the old call"' }, 'get');
        } else {
          ok(stale.status === 'not_found' || stale.status === 'changed', `the stale resolve: ${show(stale)}`);
          fields(
            record,
            { state: 'indeterminate', owner: newLife?.owner, fence: 1 },
            'the new life is untouched',
          );
        }
      });
    },
    raceTimeoutMs,
  ),
];
