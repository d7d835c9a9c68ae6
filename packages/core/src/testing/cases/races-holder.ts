// Conformance cases, races (real concurrency): the expired holder's complete, renew, release
// and markIndeterminate against a takeover.
//
// Every operation of a round is issued at once (Promise.all) from the racers' stores; each
// round is a fresh key, and the rounds run at once. The checks are invariants, never one
// interleaving: one holder at a time, fences rise by one per takeover, one recorded outcome,
// and afterwards no holder but the current one can change the record.
import { equal, fields, ok, same } from '../check.js';
import { statusesOf } from './case-checks.js';
import { type CaseDefinition, DAY_MS, defineCase, LONG_LEASE_MS } from './case-context.js';
import { expiredLease, raceTimeoutMs, raceWith, refusesAllBut, winnerOf } from './race-support.js';

export const holderRaceCases: readonly CaseDefinition[] = [
  defineCase(
    'race: complete of the expired holder against a takeover: one recorded outcome or one new holder',
    async (c) => {
      await c.inRounds(async (round) => {
        const { ref, first, opts } = await expiredLease(c);
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
        await refusesAllBut(c, ref, [first.holder], race.claims, opts, winner?.index, round);
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: renew of the expired holder against a takeover: renewed or taken over, never both',
    async (c) => {
      await c.inRounds(async (round) => {
        const { ref, first, opts } = await expiredLease(c);
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
        await refusesAllBut(c, ref, [first.holder], race.claims, opts, winner?.index, round);
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: release of the expired holder against claims: exactly one new holder, its record kept',
    async (c) => {
      await c.inRounds(async (round) => {
        const { ref, first, opts } = await expiredLease(c);
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
        await refusesAllBut(c, ref, [first.holder], race.claims, opts, winner.index, round);
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: markIndeterminate of the expired holder against a takeover: marked or taken over, never both',
    async (c) => {
      await c.inRounds(async (round) => {
        const { ref, first, opts } = await expiredLease(c);
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
        await refusesAllBut(c, ref, [first.holder], race.claims, opts, winner?.index, round);
      });
    },
    raceTimeoutMs,
  ),
];
