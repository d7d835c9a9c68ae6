// Approvals under attack and under an operator's stale view: races through two guards sharing a
// store, bad input to approve / deny / decide.
import { describe, expect, it } from 'vitest';
import type { ApprovalRequiredError } from '../errors/approval-required-error.js';
import { StoreInputError } from '../errors/store-input-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import { Guard } from './guard.js';
import { call, rejection } from './guard.test-support.js';

const needsApproval: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL, approval: 'required' };
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
