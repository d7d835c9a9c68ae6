// Approvals under attack and under an operator's stale view: races through two guards sharing a
// store, key-secret rotation, bad input to approve / deny / decide.
import { describe, expect, it } from 'vitest';
import { ApprovalDeniedError } from '../errors/approval-denied-error.js';
import { ApprovalRequiredError } from '../errors/approval-required-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { StoreInputError } from '../errors/store-input-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import { Guard } from './guard.js';
import { call, rejection } from './guard.test-support.js';

const needsApproval: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL, approval: 'required' };
const OLD_SECRET = 'o'.repeat(32);
const NEW_SECRET = 'n'.repeat(32);
const refund = (args: Record<string, unknown> = { orderId: 'A-1', amount: 30 }) => call(args, needsApproval);

describe('guard: approvals under attack', () => {
  it('approve, deny and forty resumes through two guards at once: at most one run, only if the denial came too late', async () => {
    const store = new MemoryStore();
    const first = new Guard({ store, tenant: 'acme' });
    const second = new Guard({ store, tenant: 'acme' });
    for (let round = 0; round < 25; round += 1) {
      const args = { orderId: `R-${round}`, amount: round };
      let runs = 0;
      const body = async () => {
        runs += 1;
        await new Promise((resolve) => setTimeout(resolve, 1));
        return 'done';
      };
      const resumes = Array.from({ length: 40 }, (_, index) =>
        (index % 2 === 0 ? first : second).run(refund(args), body).then(
          (value) => value,
          (error: unknown) => (error as { code?: string }).code,
        ),
      );
      const decisions = [first.approve(refund(args)), second.deny(refund(args))];
      // Shuffle the order the operations start in, round by round.
      const all = round % 2 === 0 ? [...decisions, ...resumes] : [...resumes, ...decisions];
      const settled = await Promise.all(all as Promise<unknown>[]);
      const denial = (round % 2 === 0 ? settled[1] : settled[41]) as { status: string };
      expect(runs).toBeLessThanOrEqual(1);
      if (runs === 1) expect(denial.status).toBe('consumed');
      const record = await first.inspect((await keyOf(args)) ?? '');
      if (runs === 1) expect(record?.state).toBe('completed');
      else expect(['denied', 'awaiting_approval', 'approved']).toContain(record?.state);
    }
  });

  it('after a key-secret rotation, an approval made through the rotated guard runs the call once', async () => {
    const store = new MemoryStore();
    const before = new Guard({ store, tenant: 'acme', keySecret: OLD_SECRET });
    const rotated = new Guard({ store, tenant: 'acme', keySecret: [NEW_SECRET, OLD_SECRET] });
    // The call asked before the rotation; the operator approves it through the rotated guard.
    const asked = await rejection(before.run(refund(), async () => 'never'));
    expect(ApprovalRequiredError.isInstance(asked)).toBe(true);
    expect((await rotated.approve(refund(), { by: 'ops' })).status).toBe('decided');
    let runs = 0;
    const resumed = await rotated.run(refund(), async () => {
      runs += 1;
      return 'refunded';
    });
    expect(resumed).toBe('refunded');
    expect(runs).toBe(1);
    expect(await rotated.run(refund(), async () => 'again')).toBe('refunded');
    expect(runs).toBe(1);
  });

  it('after a key-secret rotation, the old request decided from the list runs once; a run or denial before it stands', async () => {
    const store = new MemoryStore();
    const before = new Guard({ store, tenant: 'acme', keySecret: OLD_SECRET });
    const rotated = new Guard({ store, tenant: 'acme', keySecret: [NEW_SECRET, OLD_SECRET] });
    const body = (value: string, count: { runs: number }) => async () => {
      count.runs += 1;
      return value;
    };
    // Decided from the list (the record under the old key), used by the rotated guard.
    const listed = { runs: 0 };
    await rejection(before.run(refund({ orderId: 'L-1' }), body('never', listed)));
    const [request] = (await rotated.approvals()).records;
    expect(request).toBeDefined();
    if (request === undefined) return;
    expect((await rotated.decide(request, true, { by: 'ops' })).status).toBe('decided');
    expect(await rotated.run(refund({ orderId: 'L-1' }), body('listed', listed))).toBe('listed');
    expect(await rotated.run(refund({ orderId: 'L-1' }), body('again', listed))).toBe('listed');
    expect(listed.runs).toBe(1);
    // Ran before the rotation: a new approval through the rotated guard authorises no second run.
    const ran = { runs: 0 };
    await before.approve(refund({ orderId: 'R-1' }));
    expect(await before.run(refund({ orderId: 'R-1' }), body('first', ran))).toBe('first');
    expect((await rotated.approve(refund({ orderId: 'R-1' }))).status).toBe('consumed');
    expect(await rotated.run(refund({ orderId: 'R-1' }), body('second', ran))).toBe('first');
    expect(ran.runs).toBe(1);
    // Denied before the rotation: the rotated guard's run is denied, and so is its approval.
    const denied = { runs: 0 };
    await rejection(before.run(refund({ orderId: 'D-1' }), body('never', denied)));
    await before.deny(refund({ orderId: 'D-1' }));
    expect((await rotated.approve(refund({ orderId: 'D-1' }))).status).toBe('denied');
    const stop = await rejection(rotated.run(refund({ orderId: 'D-1' }), body('never', denied)));
    expect(ApprovalDeniedError.isInstance(stop)).toBe(true);
    expect(denied.runs).toBe(0);
  });

  it('a listed approval made ahead of its call (no request owner) can be revoked through guard.decide, once', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    await guard.approve(refund(), { by: 'ops' });
    const [ahead] = (await guard.approvals({ states: ['approved'] })).records;
    expect(ahead?.owner).toBe('');
    if (ahead === undefined) return;
    const revoked = await guard.decide(ahead, false, { by: 'ops', reason: 'wrong order' });
    expect(revoked.status).toBe('decided');
    expect(ApprovalDeniedError.isInstance(await rejection(guard.run(refund(), async () => 'never')))).toBe(
      true,
    );
    // Used since it was listed: a revoke from the stale view answers consumed, and an approval from
    // it is refused by the store's input check (no request owner), never a new approval.
    const used = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    await used.approve(refund({ orderId: 'U-1' }));
    const [listed] = (await used.approvals({ states: ['approved'] })).records;
    if (listed === undefined) throw new Error('expected the approval listed');
    expect(await used.run(refund({ orderId: 'U-1' }), async () => 'ran')).toBe('ran');
    expect((await used.decide(listed, false)).status).toBe('consumed');
    expect(StoreInputError.isInstance(await rejection(used.decide(listed, true)))).toBe(true);
    expect((await used.inspect(listed.key))?.state).toBe('completed');
  });

  it('resolve and release of a record waiting for, or holding, a decision answer not_resolvable, nothing written', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    await rejection(guard.run(refund({ orderId: 'W-1' }), async () => 'never'));
    await guard.approve(refund({ orderId: 'A-1' }));
    await rejection(guard.run(refund({ orderId: 'D-1' }), async () => 'never'));
    await guard.deny(refund({ orderId: 'D-1' }));
    const states = ['awaiting_approval', 'approved', 'denied'] as const;
    const before = (await guard.approvals({ states: [...states] })).records;
    expect(before.map((record) => record.state).sort()).toEqual([...states].sort());
    for (const record of before) {
      for (const resolution of [{ released: true as const }, { outcome: 'forged' }]) {
        const answer = await guard.resolve(record.key, resolution, { by: 'ops', reason: 'try' });
        expect([record.state, answer.status]).toEqual([record.state, 'not_resolvable']);
      }
    }
    expect((await guard.approvals({ states: [...states] })).records).toEqual(before);
    expect(await guard.run(refund({ orderId: 'A-1' }), async () => 'ran')).toBe('ran');
  });

  it('with keyArguments, arguments that cannot be fingerprinted are refused, never approved by their key alone', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const policy: IdempotencyPolicy = { ...needsApproval, keyArguments: ['orderId'] };
    const byKey = (amount: unknown) => call({ orderId: 'A-1', amount }, policy);
    let runs = 0;
    for (const attempt of [guard.approve(byKey(10n)), guard.run(byKey(99_999n), async () => (runs += 1))]) {
      const error = await rejection(attempt);
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect((error as KeyDerivationError).message).toContain('cannot be fingerprinted');
    }
    expect(runs).toBe(0);
    expect((await guard.approvals({ states: ['awaiting_approval', 'approved'] })).records).toEqual([]);
  });

  it('bad options to approve and deny are StoreInputError, never a TypeError from inside the guard', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const cases: unknown[] = [
      { expect: null },
      { expect: 'owner-1' },
      { expect: {} },
      { by: 7 },
      { retentionMs: -1 },
    ];
    for (const options of cases) {
      const approve = await rejection(guard.approve(refund(), options as never));
      expect(StoreInputError.isInstance(approve), JSON.stringify(options)).toBe(true);
      const deny = await rejection(guard.deny(refund(), options as never));
      expect(StoreInputError.isInstance(deny), JSON.stringify(options)).toBe(true);
    }
    expect((await guard.approvals({ states: ['awaiting_approval', 'approved', 'denied'] })).records).toEqual(
      [],
    );
  });
});

/** The key a guard of tenant acme without a secret derives for `args`' call: asked on a scratch store (the key needs no store). */
async function keyOf(args: Record<string, unknown>): Promise<string | undefined> {
  const scratch = new Guard({ store: new MemoryStore(), tenant: 'acme' });
  const stop = await rejection(scratch.run(refund(args), async () => 'never'));
  return (stop as ApprovalRequiredError).key;
}
