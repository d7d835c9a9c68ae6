// Conformance cases: approvals (docs/store-contract.md, "Approvals"). A call that needs an
// approval writes a request and runs nothing; an operator's decision is recorded in the record;
// the claim consumes an approval in its own atomic step, once; a denial stays a denial; another
// tool, fingerprint or tenant is never authorised. The races are in races-approvals.ts.
import { StoreInputError } from '../../errors/store-input-error.js';
import { equal, fields, ok, same } from '../check.js';
import { approved, asking, decide, decision, requested } from './approval-support.js';
import { isInputError } from './case-checks.js';
import { type CaseDefinition, DAY_MS, defineCase, sleep } from './case-context.js';

export const approvalCases: readonly CaseDefinition[] = [
  defineCase(
    'approval: a claim that needs one writes awaiting_approval (fence 0) and answers approval_required; nothing is held',
    async (c) => {
      const ref = c.ref();
      const opts = await requested(c, ref);
      const record = await c.store.get(ref);
      fields(
        record,
        {
          state: 'awaiting_approval',
          fence: 0,
          attempt: 0,
          owner: opts.owner,
          tool: opts.tool,
          fingerprint: opts.fingerprint,
          runId: 'run-1',
          callId: 'call-1',
          description: 'refund A-1 EUR 30',
        },
        'get',
      );
      ok(record?.approval === undefined, 'no decision is recorded yet');
      // Asked again, with or without the requirement: the same request, nothing written.
      for (const again of [asking(c), c.options()]) {
        const result = await c.store.claim(ref, again);
        equal(result.status, 'approval_required', 'a repeat of the request');
      }
      fields(await c.store.get(ref), { owner: opts.owner, updatedAtMs: record?.updatedAtMs }, 'unchanged');
      // No holder's write matches a record no attempt claimed.
      const holder = { fence: 1, owner: opts.owner };
      equal((await c.store.complete(ref, holder, '"x"', DAY_MS)).status, 'stale', 'complete');
      equal((await c.store.release(ref, holder)).status, 'stale', 'release');
      same(await c.store.renew(ref, holder, 1000), { status: 'lost', reason: 'stale' }, 'renew');
      equal((await c.store.resolve(ref, { released: true }, DAY_MS)).status, 'not_resolvable', 'resolve');
      equal(await c.store.waitForSettle(ref, { timeoutMs: 1000 }), 'settled', 'waitForSettle');
      fields(await c.store.get(ref), { state: 'awaiting_approval' }, 'still asking');
    },
  ),

  defineCase(
    'approval: an approved call is acquired at fence 1 once, keeps the approval, and a repeat is busy then completed',
    async (c) => {
      const ref = c.ref();
      const opts = await requested(c, ref);
      const result = await decide(c.store, ref, decision(c, { by: 'ops@example.com', reason: 'checked' }));
      equal(result.status, 'decided', 'decide');
      const decided = await c.store.get(ref);
      fields(decided, { state: 'approved', fence: 0, owner: opts.owner }, 'approved');
      fields(decided?.approval, { approved: true, by: 'ops@example.com', reason: 'checked' }, 'approval');
      ok(typeof decided?.approval?.atMs === 'number', 'approval.atMs');
      const claimer = asking(c);
      const claim = await c.store.claim(ref, claimer);
      fields(claim, { status: 'acquired', fence: 1, attempt: 1, takeover: false }, 'the claim consumes it');
      const held = await c.store.get(ref);
      fields(held, { state: 'in_progress', fence: 1, attempt: 1, owner: claimer.owner }, 'get');
      same(held?.approval, decided?.approval, 'the approval is kept on the claimed record');
      equal((await c.store.claim(ref, asking(c))).status, 'busy', 'a second use while it runs');
      equal((await c.store.claim(ref, c.options())).status, 'busy', 'a repeat without the requirement');
      const holder = { fence: 1, owner: claimer.owner };
      same(await c.store.complete(ref, holder, '"refunded"', DAY_MS), { status: 'completed' }, 'complete');
      const replay = await c.store.claim(ref, asking(c));
      fields(replay, { status: 'completed', record: { outcome: '"refunded"', fence: 1 } }, 'a replay');
      same(replay.status === 'completed' && replay.record.approval, decided?.approval, 'replay approval');
      equal((await decide(c.store, ref, decision(c))).status, 'consumed', 'approving again');
      equal((await decide(c.store, ref, decision(c, { approved: false }))).status, 'consumed', 'denying');
    },
  ),

  defineCase(
    'approval: approved before the call asked; a claim without the requirement consumes it too',
    async (c) => {
      const ref = c.ref();
      await approved(c, ref);
      fields(await c.store.get(ref), { state: 'approved', fence: 0, attempt: 0 }, 'created approved');
      const claim = await c.store.claim(ref, c.options());
      fields(claim, { status: 'acquired', fence: 1, attempt: 1 }, 'a claim without the requirement');
      fields(await c.store.get(ref), { state: 'in_progress', approval: { approved: true } }, 'consumed');
    },
  ),

  defineCase(
    'approval: another tool or fingerprint is a conflict, whatever checkFingerprint says',
    async (c) => {
      const ref = c.ref();
      await approved(c, ref);
      const other = { fingerprint: 'e'.repeat(64) };
      for (const opts of [
        c.options({ ...other, checkFingerprint: false }),
        asking(c, { ...other, checkFingerprint: false }),
        asking(c, { tool: 'charge' }),
      ]) {
        equal((await c.store.claim(ref, opts)).status, 'conflict', `claim ${JSON.stringify(opts.tool)}`);
      }
      equal((await decide(c.store, ref, decision(c, other))).status, 'conflict', 'decide, other fingerprint');
      equal((await decide(c.store, ref, decision(c, { tool: 'charge' }))).status, 'conflict', 'other tool');
      fields(await c.store.get(ref), { state: 'approved', fence: 0 }, 'unchanged');
      equal((await c.store.claim(ref, asking(c))).status, 'acquired', 'the approved call itself');
    },
  ),

  defineCase("approval: another tenant's approval of the same key authorises nothing", async (c) => {
    const ref = c.ref();
    await approved(c, ref);
    const elsewhere = { tenant: c.tenant(), key: ref.key };
    equal((await c.store.claim(elsewhere, asking(c))).status, 'approval_required', 'other tenant');
    fields(await c.store.get(ref), { state: 'approved' }, 'the approval is still unused');
    fields(await c.store.get(elsewhere), { state: 'awaiting_approval' }, 'its own request');
  }),

  defineCase(
    'approval: a denial stays a denial (claims, an approval after it); an unused approval can be revoked',
    async (c) => {
      const ref = c.ref();
      await requested(c, ref);
      const denial = decision(c, { approved: false, by: 'ops', reason: 'fraud' });
      equal((await decide(c.store, ref, denial)).status, 'decided', 'deny');
      for (const opts of [asking(c), c.options(), asking(c)]) {
        const result = await c.store.claim(ref, opts);
        fields(
          result,
          { status: 'denied', record: { state: 'denied', approval: { approved: false } } },
          'claim',
        );
      }
      const overridden = await decide(c.store, ref, decision(c, { by: 'someone' }));
      fields(
        overridden,
        { status: 'denied', record: { approval: { by: 'ops', reason: 'fraud' } } },
        'approve',
      );
      const again = await decide(c.store, ref, decision(c, { approved: false, by: 'other' }));
      fields(again, { status: 'decided', record: { approval: { by: 'ops' } } }, 'deny again');
      // Revoked before use: approved, then denied.
      const revoked = c.ref();
      await approved(c, revoked);
      equal((await decide(c.store, revoked, denial)).status, 'decided', 'revoke');
      equal((await c.store.claim(revoked, c.options())).status, 'denied', 'a claim after the revocation');
    },
  ),

  defineCase('approval: expect names the request decided; without a record it is not_found', async (c) => {
    const ref = c.ref();
    equal(
      (await decide(c.store, ref, decision(c, { expect: { owner: 'o' } }))).status,
      'not_found',
      'absent',
    );
    equal(await c.store.get(ref), null, 'nothing created');
    const opts = await requested(c, ref);
    const stale = await decide(c.store, ref, decision(c, { expect: { owner: `${opts.owner}-other` } }));
    fields(stale, { status: 'changed', record: { state: 'awaiting_approval' } }, 'another request');
    const right = await decide(c.store, ref, decision(c, { expect: { owner: opts.owner } }));
    fields(right, { status: 'decided', record: { state: 'approved' } }, 'the request looked at');
  }),

  defineCase('approval: a call released after its approval needs a new one (single use)', async (c) => {
    const ref = c.ref();
    await approved(c, ref);
    const claimer = asking(c);
    const claim = await c.store.claim(ref, claimer);
    equal(claim.status, 'acquired', 'claim');
    same(await c.store.release(ref, { fence: 1, owner: claimer.owner }), { status: 'released' }, 'release');
    equal((await c.store.claim(ref, asking(c))).status, 'approval_required', 'the next claim asks again');
    fields(await c.store.get(ref), { state: 'awaiting_approval', fence: 0 }, 'a new request');
  }),

  defineCase('approval: decisions live retentionMs from the decision; forget erases them', async (c) => {
    const ref = c.ref();
    const retentionMs = c.leaseMs * 2;
    await requested(c, ref);
    const result = await decide(c.store, ref, decision(c), retentionMs);
    ok(result.status === 'decided', 'decided');
    const { record } = result;
    equal(record.expiresAtMs, (record.approval?.atMs ?? 0) + retentionMs, 'expiresAtMs');
    await sleep(retentionMs + c.expireMs);
    equal(await c.store.get(ref), null, 'gone after its retention');
    equal((await c.store.claim(ref, asking(c))).status, 'approval_required', 'asks anew');
    const forgotten = c.ref();
    await approved(c, forgotten);
    ok((await c.store.forget({ tenant: forgotten.tenant })) >= 1, 'forget counts it');
    equal(await c.store.get(forgotten), null, 'forgotten');
  }),

  defineCase('approval: list selects the approval states, never by default', async (c) => {
    const tenant = c.tenant();
    const asked = { tenant, key: 'a'.repeat(64) };
    const yes = { tenant, key: 'b'.repeat(64) };
    const no = { tenant, key: 'c'.repeat(64) };
    await requested(c, asked);
    await approved(c, yes);
    await decide(c.store, no, decision(c, { approved: false }));
    const byState = async (state: 'awaiting_approval' | 'approved' | 'denied') =>
      (await c.store.list({ tenant, states: [state], limit: 10 })).records.map((record) => record.key);
    same(await byState('awaiting_approval'), [asked.key], 'awaiting_approval');
    same(await byState('approved'), [yes.key], 'approved');
    same(await byState('denied'), [no.key], 'denied');
    same((await c.store.list({ tenant, limit: 10 })).records, [], 'the default states');
  }),

  defineCase('approval: bad decisions and requirements are refused, nothing written', async (c) => {
    const ref = c.ref();
    const bad = [
      decision(c, { tool: '' }),
      decision(c, { fingerprint: 'x'.repeat(257) }),
      decision(c, { approved: 'yes' as unknown as boolean }),
      decision(c, { by: '\u0000' }),
      decision(c, { reason: 'r'.repeat(1025) }),
      decision(c, { expect: { owner: '' } }),
    ];
    for (const [index, what] of bad.entries()) {
      const error = await decide(c.store, ref, what).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      ok(isInputError(error), `bad decision ${index}: StoreInputError, got ${String(error)}`);
    }
    const retention = await decide(c.store, ref, decision(c), 0).catch((caught: unknown) => caught);
    ok(StoreInputError.isInstance(retention), 'retentionMs 0');
    const claim = await c.store
      .claim(ref, c.options({ approval: 'maybe' as unknown as 'required' }))
      .catch((caught: unknown) => caught);
    ok(StoreInputError.isInstance(claim), 'approval other than required');
    equal(await c.store.get(ref), null, 'nothing written');
  }),
];
