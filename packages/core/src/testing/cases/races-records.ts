// Conformance cases, races (real concurrency): operators' resolves, retention expiry and forget
// against claims.
//
// Every operation of a round is issued at once (Promise.all) from the racers' stores; each
// round is a fresh key, and the rounds run at once. The checks are invariants, never one
// interleaving: one holder at a time, fences rise by one per takeover, one recorded outcome,
// and afterwards no holder but the current one can change the record.
import type { ClaimOptions, ClaimResult } from '../../store/idempotency-store.js';
import { equal, fields, ok, show } from '../check.js';
import { holderOf, refusesNonCurrentHolders, statusesOf } from './case-checks.js';
import {
  type Acquired,
  type CaseDefinition,
  DAY_MS,
  defineCase,
  LONG_LEASE_MS,
  sleep,
} from './case-context.js';
import { claimers, losersOf, raceTimeoutMs, raceWith, winnerOf } from './race-support.js';

export const recordRaceCases: readonly CaseDefinition[] = [
  defineCase(
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
  ),

  defineCase(
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
  ),

  defineCase(
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
  ),

  defineCase(
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
  ),
];
