// Conformance cases, races (real concurrency) on approvals: every operation of a round is issued
// at once from the racers' stores, on a fresh key per round, rounds at once. The invariants: an
// approval is consumed by at most one claim; a denial is never run; a request is written once.
import type { ClaimResult, DecideResult } from '../../store/idempotency-store.js';
import { equal, fields, ok, same, show } from '../check.js';
import { approved, asking, decide, decision, requested } from './approval-support.js';
import { refusesNonCurrentHolders, statusesOf } from './case-checks.js';
import { type CaseDefinition, defineCase } from './case-context.js';
import { losersOf, raceTimeoutMs, winnerOf } from './race-support.js';

export const approvalRaceCases: readonly CaseDefinition[] = [
  defineCase(
    'race: N claims of one approved call: exactly one acquired (fence 1), the rest busy',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        await approved(c, ref);
        // Half of them need the approval, half do not: both consume it alike.
        const opts = Array.from({ length: c.racers }, (_, index) =>
          index % 2 === 0 ? asking(c) : c.options(),
        );
        const claims = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
        same(statusesOf(claims), { acquired: 1, busy: opts.length - 1 }, 'statuses');
        const winner = winnerOf(claims, opts);
        ok(winner !== undefined, 'a winner');
        fields(winner.result, { fence: 1, attempt: 1, takeover: false }, 'winner');
        fields(
          await c.store.get(ref),
          { state: 'in_progress', fence: 1, attempt: 1, owner: winner.options.owner },
          'get',
        );
        await refusesNonCurrentHolders(c, ref, losersOf(claims, opts, winner.index), `round ${round}`);
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: N claims of a call nobody approved: all approval_required, one request written',
    async (c) => {
      await c.inRounds(async () => {
        const ref = c.ref();
        const opts = Array.from({ length: c.racers }, () => asking(c));
        const claims = await Promise.all(opts.map((o, index) => c.racer(index).claim(ref, o)));
        same(statusesOf(claims), { approval_required: opts.length }, 'statuses');
        const record = await c.store.get(ref);
        fields(record, { state: 'awaiting_approval', fence: 0 }, 'get');
        ok(
          opts.some((o) => o.owner === record?.owner),
          `the request is one claimer's (owner ${show(record?.owner)})`,
        );
        const listed = await c.store.list({ tenant: ref.tenant, states: ['awaiting_approval'], limit: 10 });
        equal(listed.records.length, 1, 'one request listed');
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: approve, deny and claims at once: at most one acquired, and only if the denial came too late',
    async (c) => {
      await c.inRounds(async (round) => {
        const ref = c.ref();
        await requested(c, ref);
        const opts = Array.from({ length: c.racers }, () => asking(c));
        const work: (() => Promise<ClaimResult | DecideResult>)[] = opts.map(
          (o, index) => () => c.racer(index + 2).claim(ref, o),
        );
        // The approval and the denial amid the claims, in another order each round.
        const yes = () => decide(c.racer(0), ref, decision(c, { by: 'yes' }));
        const no = () => decide(c.racer(1), ref, decision(c, { approved: false, by: 'no' }));
        const at = round % (opts.length + 1);
        work.splice(at, 0, round % 2 === 0 ? yes : no);
        work.splice((at * 7) % (work.length + 1), 0, round % 2 === 0 ? no : yes);
        const results = await Promise.all(work.map((start) => start()));
        const approval = results.find((_, index) => work[index] === yes) as DecideResult;
        const denial = results.find((_, index) => work[index] === no) as DecideResult;
        const claims = results.filter(
          (_, index) => work[index] !== yes && work[index] !== no,
        ) as ClaimResult[];
        const acquired = claims.filter((claim) => claim.status === 'acquired').length;
        ok(acquired <= 1, `at most one acquired, got ${acquired}`);
        const record = await c.store.get(ref);
        if (acquired === 1) {
          equal(denial.status, 'consumed', 'a denial after the claim finds it consumed');
          fields(record, { state: 'in_progress', fence: 1 }, 'get');
        } else {
          ok(denial.status === 'decided', `a denial before any claim took effect: ${show(denial)}`);
          fields(record, { state: 'denied' }, 'get');
          ok(
            approval.status === 'denied' || approval.status === 'decided',
            `the approval came first (then revoked) or found the denial: ${show(approval)}`,
          );
          equal((await c.store.claim(ref, asking(c))).status, 'denied', 'a claim after the round');
        }
      });
    },
    raceTimeoutMs,
  ),

  defineCase(
    'race: approvals and claims of a free key at once: one acquisition in all, counting a claim after',
    async (c) => {
      await c.inRounds(async () => {
        const ref = c.ref();
        const opts = Array.from({ length: c.racers }, () => asking(c));
        const claims: Promise<ClaimResult>[] = [];
        const decisions: Promise<DecideResult>[] = [];
        // Issued in this order, all before any reply is awaited.
        for (const [index, o] of opts.entries()) {
          claims.push(c.racer(index).claim(ref, o));
          if (index % 3 === 0) decisions.push(decide(c.racer(index + 1), ref, decision(c)));
        }
        await Promise.all(decisions);
        let acquired = (await Promise.all(claims)).filter((claim) => claim.status === 'acquired').length;
        const after = await c.store.claim(ref, asking(c));
        if (after.status === 'acquired') acquired += 1;
        equal(acquired, 1, `acquisitions over the round and the claim after it (${show(after.status)})`);
      });
    },
    raceTimeoutMs,
  ),
];
