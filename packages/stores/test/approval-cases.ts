// The approval cases a store of this package runs beside the conformance suite (docs/store-contract.md
// in @toolfence/core, "Approvals"): a call that asks, an operator's decision, the claim that
// consumes it (once, however many claims race for it), denial, other arguments or tenants, the
// holder's and operator's writes on a record before its claim, listing, forget and retention.
// `createPeer` gives a store with its own connection to the same records, so racing claims meet
// in the server or the file, not in one client.
import { randomUUID } from 'node:crypto';
import type {
  ApprovalDecision,
  ClaimOptions,
  ClaimResult,
  DecideResult,
  IdempotencyStore,
  RecordRef,
} from '@toolfence/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';

type ApprovalStore = IdempotencyStore & Required<Pick<IdempotencyStore, 'decideApproval'>>;

const DAY_MS = 86_400_000;
const asking = (overrides: Partial<ClaimOptions> = {}): ClaimOptions =>
  claimOptions({ approval: 'required', mode: 'at-most-once', maxAttempts: 1, ...overrides });

function decision(overrides: Partial<ApprovalDecision> = {}): ApprovalDecision {
  return { approved: true, tool: 'refund', fingerprint: 'f'.repeat(64), by: 'ops@example.com', ...overrides };
}

export interface ApprovalCaseOptions {
  /** Racing claims per round (each from its own peer store). */
  readonly racers?: number;
  readonly rounds?: number;
}

export function describeApprovalCases(
  name: string,
  createStore: () => Promise<ApprovalStore>,
  createPeer: () => Promise<ApprovalStore>,
  options: ApprovalCaseOptions = {},
): void {
  const racers = options.racers ?? 8;
  const rounds = options.rounds ?? 5;
  describe(`${name}: approvals`, () => {
    let store: ApprovalStore;
    let peers: ApprovalStore[] = [];
    beforeAll(async () => {
      store = await createStore();
      peers = await Promise.all(Array.from({ length: racers }, () => createPeer()));
    });
    afterAll(async () => {
      await Promise.all([store, ...peers].map((each) => each?.close?.()));
    });

    const decide = (ref: RecordRef, d: Partial<ApprovalDecision> = {}, retentionMs = DAY_MS) =>
      store.decideApproval(ref, decision(d), retentionMs);

    it('a call that needs an approval asks once, writes awaiting_approval and runs nothing', async () => {
      const ref = randomRef();
      const claim = asking({ runId: 'run-1', callId: 'call-1', description: 'refund 5 EUR' });
      const first = await store.claim(ref, claim);
      expect(first.status).toBe('approval_required');
      const record = (first as Extract<ClaimResult, { status: 'approval_required' }>).record;
      expect(record).toMatchObject({
        state: 'awaiting_approval',
        fence: 0,
        attempt: 0,
        owner: claim.owner,
        tool: 'refund',
        runId: 'run-1',
        callId: 'call-1',
        description: 'refund 5 EUR',
      });
      expect(record.approval).toBeUndefined();
      expect(record.expiresAtMs - (record.updatedAtMs ?? 0)).toBe(DAY_MS);
      // Asked again (a resume, another owner): the same request, nothing written.
      const again = await store.claim(ref, asking());
      expect(again).toMatchObject({ status: 'approval_required', record: { owner: claim.owner } });
      // Without the option the state answers alike: no claim ever runs an unapproved call.
      expect((await store.claim(ref, claimOptions())).status).toBe('approval_required');
      expect(await store.get(ref)).toMatchObject({ state: 'awaiting_approval', fence: 0, attempt: 0 });
      expect(await store.waitForSettle(ref, { timeoutMs: 1000 })).toBe('settled');
    });

    it('an approval is consumed by one claim; later claims are busy, then replay the outcome', async () => {
      const ref = randomRef();
      const asked = await store.claim(ref, asking());
      const owner = (asked as { record: { owner: string } }).record.owner;
      const decided = await decide(ref, { reason: 'checked the order', expect: { owner } });
      expect(decided.status).toBe('decided');
      const approved = (decided as Extract<DecideResult, { status: 'decided' }>).record;
      expect(approved).toMatchObject({
        state: 'approved',
        fence: 0,
        attempt: 0,
        owner,
        approval: { approved: true, by: 'ops@example.com', reason: 'checked the order' },
      });
      const atMs = approved.approval?.atMs ?? 0;
      expect(approved.expiresAtMs).toBe(atMs + DAY_MS);

      const claim = asking({ runId: 'run-2' });
      const acquired = await store.claim(ref, claim);
      expect(acquired).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
      if (acquired.status !== 'acquired') throw new Error('not acquired');
      if (acquired.approval !== undefined) expect(acquired.approval).toEqual(approved.approval);
      const held = await store.get(ref);
      expect(held).toMatchObject({
        state: 'in_progress',
        fence: 1,
        attempt: 1,
        owner: claim.owner,
        runId: 'run-2',
        approval: approved.approval,
      });
      expect(held?.expiresAtMs).toBe(acquired.leaseExpiresAtMs + claim.retentionMs);
      expect((await store.claim(ref, asking())).status).toBe('busy');
      // A decision now changes nothing: the approval was used.
      expect((await decide(ref, { approved: false })).status).toBe('consumed');
      expect(await store.complete(ref, { fence: 1, owner: claim.owner }, '"refunded"', DAY_MS)).toEqual({
        status: 'completed',
      });
      const replay = await store.claim(ref, asking());
      expect(replay).toMatchObject({
        status: 'completed',
        record: { outcome: '"refunded"', approval: approved.approval },
      });
      expect((await decide(ref)).status).toBe('consumed');
    });

    it('an approval binds tool, arguments and tenant', async () => {
      const ref = randomRef();
      await store.claim(ref, asking());
      expect(await decide(ref, { fingerprint: 'e'.repeat(64) })).toMatchObject({
        status: 'conflict',
        record: { state: 'awaiting_approval' },
      });
      expect((await decide(ref, { tool: 'charge' })).status).toBe('conflict');
      expect((await decide(ref)).status).toBe('decided');
      // Other arguments never use it, even for a claim that does not check fingerprints.
      const other = await store.claim(
        ref,
        claimOptions({ fingerprint: 'e'.repeat(64), checkFingerprint: false }),
      );
      expect(other).toMatchObject({ status: 'conflict', record: { state: 'approved' } });
      expect((await store.claim(ref, asking({ tool: 'charge' }))).status).toBe('conflict');
      // The same key under another tenant is another call.
      const elsewhere = { tenant: `${ref.tenant}-b`, key: ref.key };
      expect((await store.claim(elsewhere, asking())).status).toBe('approval_required');
      expect((await store.get(ref))?.state).toBe('approved');
      expect((await store.claim(ref, asking())).status).toBe('acquired');
    });

    it('a denial stays a denial; a revoked approval is a denial; the same decision twice is kept once', async () => {
      const denied = randomRef();
      await store.claim(denied, asking());
      const first = await decide(denied, { approved: false, reason: 'not this customer' });
      expect(first).toMatchObject({
        status: 'decided',
        record: { state: 'denied', approval: { approved: false, reason: 'not this customer' } },
      });
      expect(await store.claim(denied, asking())).toMatchObject({
        status: 'denied',
        record: { approval: { approved: false } },
      });
      expect((await store.claim(denied, claimOptions())).status).toBe('denied');
      expect((await decide(denied)).status).toBe('denied');
      const again = await decide(denied, { approved: false, reason: 'twice' });
      expect(again).toMatchObject({
        status: 'decided',
        record: { approval: { reason: 'not this customer' } },
      });

      const revoked = randomRef();
      await store.claim(revoked, asking());
      const approval = await decide(revoked);
      const atMs = (approval as { record: { approval?: { atMs: number } } }).record.approval?.atMs;
      const same = await decide(revoked, { reason: 'again' });
      expect(same).toMatchObject({ status: 'decided', record: { state: 'approved', approval: { atMs } } });
      expect(
        (same as { record: { approval?: { reason?: string } } }).record.approval?.reason,
      ).toBeUndefined();
      expect((await decide(revoked, { approved: false })).status).toBe('decided');
      expect((await store.claim(revoked, asking())).status).toBe('denied');
    });

    it('expect names the request: another owner is changed, no record is not_found', async () => {
      const ref = randomRef();
      expect(await decide(ref, { expect: { owner: 'someone' } })).toEqual({ status: 'not_found' });
      expect(await store.get(ref)).toBeNull();
      await store.claim(ref, asking());
      expect(await decide(ref, { expect: { owner: 'someone' } })).toMatchObject({
        status: 'changed',
        record: { state: 'awaiting_approval' },
      });
      expect((await store.get(ref))?.state).toBe('awaiting_approval');
    });

    it('a call approved before it asked: the decision creates the record, any claim of it consumes it', async () => {
      const ref = randomRef();
      const created = await decide(ref, {
        runId: 'run-9',
        callId: 'call-9',
        description: 'pre-approved',
        codec: 'json',
      });
      expect(created).toMatchObject({
        status: 'decided',
        record: {
          state: 'approved',
          fence: 0,
          attempt: 0,
          owner: '',
          runId: 'run-9',
          callId: 'call-9',
          description: 'pre-approved',
          codec: 'json',
        },
      });
      const claim = claimOptions({ mode: 'at-most-once', maxAttempts: 1 });
      expect(await store.claim(ref, claim)).toMatchObject({ status: 'acquired', fence: 1, attempt: 1 });
      const held = await store.get(ref);
      expect(held).toMatchObject({ state: 'in_progress', owner: claim.owner, approval: { approved: true } });
      // The claim's ids replace the decision's (absent ones included).
      expect(held?.runId).toBeUndefined();
      expect(held?.description).toBeUndefined();
    });

    it('no holder or operator write matches a record before its claim', async () => {
      const ref = randomRef();
      const claim = asking();
      await store.claim(ref, claim);
      const holder = { fence: 1, owner: claim.owner };
      expect((await store.renew(ref, holder, 30_000)).status).not.toBe('renewed');
      expect((await store.complete(ref, holder, '"x"', DAY_MS)).status).not.toBe('completed');
      expect((await store.release(ref, holder)).status).not.toBe('released');
      const marked = await store.markIndeterminate(ref, holder, { type: 'X', message: 'x' }, DAY_MS);
      expect(marked.status).not.toBe('marked');
      expect(await store.resolve(ref, { outcome: '"x"', by: 'ops' }, DAY_MS)).toMatchObject({
        status: 'not_resolvable',
      });
      expect(await store.get(ref)).toMatchObject({ state: 'awaiting_approval', fence: 0, attempt: 0 });
      expect(await store.resolutions(ref)).toEqual([]);
    });

    it('lists the approval states when asked for them, forgets them with the tenant', async () => {
      const tenant = `t-${randomUUID()}`;
      const waiting = { tenant, key: 'a'.repeat(64) };
      const approved = { tenant, key: 'b'.repeat(64) };
      const denied = { tenant, key: 'c'.repeat(64) };
      await store.claim(waiting, asking());
      await decide(approved);
      await decide(denied, { approved: false });
      const running = { tenant, key: 'd'.repeat(64) };
      await store.claim(running, claimOptions());
      const keysOf = async (states?: readonly string[]) => {
        const page = await store.list({
          tenant,
          limit: 10,
          ...(states === undefined ? {} : { states: states as never }),
        });
        return page.records.map((record) => `${record.key[0]}:${record.state}`).sort();
      };
      expect(await keysOf(['awaiting_approval'])).toEqual(['a:awaiting_approval']);
      expect(await keysOf(['approved', 'denied'])).toEqual(['b:approved', 'c:denied']);
      expect(await keysOf(['in_progress'])).toEqual(['d:in_progress']);
      // The operator's default states never include the approval states.
      expect(await keysOf()).toEqual([]);
      const all = await store.list({ allTenants: true, limit: 1000, states: ['awaiting_approval'] });
      expect(all.records.some((record) => record.tenant === tenant && record.key === waiting.key)).toBe(true);
      expect(await store.forget({ tenant })).toBe(4);
      for (const ref of [waiting, approved, denied, running]) expect(await store.get(ref)).toBeNull();
    });

    it('a decision keeps the record retentionMs; past it the key is free again', async () => {
      const ref = randomRef();
      await store.claim(ref, asking({ retentionMs: 300 }));
      const decided = await decide(ref, {}, 300);
      const record = (decided as { record: { expiresAtMs: number; approval?: { atMs: number } } }).record;
      expect(record.expiresAtMs).toBe((record.approval?.atMs ?? 0) + 300);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, record.expiresAtMs - Date.now()) + 50));
      expect(await store.get(ref)).toBeNull();
      // The approval expired unused: the call asks again.
      expect((await store.claim(ref, asking())).status).toBe('approval_required');
    });

    it(`${racers} claims racing for one approval: exactly one acquires it (${rounds} rounds)`, async () => {
      for (let round = 0; round < rounds; round++) {
        const ref = randomRef();
        await store.claim(ref, asking());
        expect((await decide(ref)).status).toBe('decided');
        const results = await Promise.all(peers.map((peer) => peer.claim(ref, asking())));
        const statuses = results.map((result) => result.status).sort();
        expect(statuses.filter((status) => status === 'acquired')).toHaveLength(1);
        expect(statuses.filter((status) => status === 'busy')).toHaveLength(racers - 1);
        const winner = results.find((result) => result.status === 'acquired');
        expect(winner).toMatchObject({ fence: 1, attempt: 1 });
        expect(await store.get(ref)).toMatchObject({ state: 'in_progress', fence: 1, attempt: 1 });
      }
    });

    it('a revocation racing the claims: either the call ran once, or it is denied and ran never', async () => {
      for (let round = 0; round < rounds; round++) {
        const ref = randomRef();
        await store.claim(ref, asking());
        await decide(ref);
        const [revoked, ...claims] = await Promise.all([
          peers[0]?.decideApproval(ref, decision({ approved: false }), DAY_MS),
          ...peers.slice(1).map((peer) => peer.claim(ref, asking())),
        ]);
        const acquired = claims.filter((result) => result?.status === 'acquired');
        if (revoked?.status === 'decided') {
          expect(claims.map((result) => result?.status)).toEqual(claims.map(() => 'denied'));
          expect((await store.get(ref))?.state).toBe('denied');
        } else {
          expect(revoked?.status).toBe('consumed');
          expect(acquired).toHaveLength(1);
          expect(claims.filter((result) => result?.status === 'busy')).toHaveLength(claims.length - 1);
          expect((await store.get(ref))?.state).toBe('in_progress');
        }
      }
    });
  });
}
