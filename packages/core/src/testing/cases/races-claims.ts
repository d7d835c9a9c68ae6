// Conformance cases, races (real concurrency): claimers on one expired lease.
//
// Every operation of a round is issued at once (Promise.all) from the racers' stores; each
// round is a fresh key, and the rounds run at once. The checks are invariants, never one
// interleaving: one holder at a time, fences rise by one per takeover, one recorded outcome,
// and afterwards no holder but the current one can change the record.
import type { IdempotencyRecord } from '../../store/idempotency-store.js';
import { fields, ok, same } from '../check.js';
import { checkLeaseExpiredError, refusesNonCurrentHolders, statusesOf } from './case-checks.js';
import { type CaseDefinition, DAY_MS, defineCase, sleep } from './case-context.js';
import { claimers, expiredLease, losersOf, raceTimeoutMs, winnerOf } from './race-support.js';

export const claimRaceCases: readonly CaseDefinition[] = [
  defineCase(
    'race: N claimers take over one expired lease at-least-once: exactly one acquired, fence raised once',
    async (c) => {
      await c.inRounds(async (round) => {
        const { ref, first, opts } = await expiredLease(c);
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
  ),

  defineCase(
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
  ),

  defineCase(
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
  ),
];
