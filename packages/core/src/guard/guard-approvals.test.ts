import { describe, expect, it } from 'vitest';
import { ApprovalDeniedError } from '../errors/approval-denied-error.js';
import { ApprovalRequiredError } from '../errors/approval-required-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { isCallStopError, stopReport } from '../errors/stop-errors.js';
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { Guard } from './guard.js';
import { call, rejection, setup } from './guard.test-support.js';

const needsApproval: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL, approval: 'required' };
const refund = (args: Record<string, unknown> = { orderId: 'A-1', amount: 30 }) => call(args, needsApproval);

describe('guard: approvals', () => {
  it('a call without an approval stops, is listed, runs once when approved, and replays after', async () => {
    const { guard, types } = setup();
    let runs = 0;
    const body = async () => {
      runs += 1;
      return { refunded: 30 };
    };
    const stop = await rejection(guard.run(refund(), body));
    expect(ApprovalRequiredError.isInstance(stop)).toBe(true);
    expect(isCallStopError(stop)).toBe(true);
    expect(stopReport(stop as ApprovalRequiredError)).toContain('did not run');
    expect(runs).toBe(0);
    const pending = await guard.approvals();
    expect(pending.records.map((record) => [record.state, record.tool, record.fence])).toEqual([
      ['awaiting_approval', 'refund', 0],
    ]);
    const decided = await guard.approve(refund(), { by: 'ops@example.com', reason: 'checked' });
    expect(decided.status).toBe('decided');
    expect(await guard.run(refund(), body)).toEqual({ refunded: 30 });
    expect(await guard.run(refund(), body)).toEqual({ refunded: 30 });
    expect(runs).toBe(1);
    const record = await guard.inspect((stop as ApprovalRequiredError).key);
    expect(record?.state).toBe('completed');
    expect(record?.approval).toMatchObject({ approved: true, by: 'ops@example.com', reason: 'checked' });
    expect(types()).toEqual([
      'tool.approval_required',
      'tool.approval_decided',
      'tool.approval_consumed',
      'tool.started',
      'tool.completed',
      'tool.deduplicated',
    ]);
  });

  it('concurrent resumes of one approved call run its body once', async () => {
    const { guard } = setup();
    let runs = 0;
    await guard.approve(refund());
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        guard.run(refund(), async () => {
          runs += 1;
          await new Promise((resolve) => setTimeout(resolve, 20));
          return 'done';
        }),
      ),
    );
    expect(runs).toBe(1);
    expect(results.every((result) => result.status === 'fulfilled' && result.value === 'done')).toBe(true);
  });

  it('an approval for other arguments does not authorise this call', async () => {
    const { guard } = setup();
    await guard.approve(refund({ orderId: 'A-1', amount: 30 }));
    let runs = 0;
    const stop = await rejection(
      guard.run(refund({ orderId: 'A-1', amount: 3000 }), async () => {
        runs += 1;
      }),
    );
    expect(ApprovalRequiredError.isInstance(stop)).toBe(true);
    expect(runs).toBe(0);
  });

  it('a denial stops every resume, and an approval after it is refused', async () => {
    const { guard, events } = setup();
    await rejection(guard.run(refund(), async () => 1));
    expect((await guard.deny(refund(), { by: 'ops', reason: 'fraud' })).status).toBe('decided');
    for (let resume = 0; resume < 3; resume++) {
      const stop = await rejection(guard.run(refund(), async () => 1));
      expect(ApprovalDeniedError.isInstance(stop)).toBe(true);
    }
    expect((await guard.approve(refund())).status).toBe('denied');
    expect(events.find((event) => event.type === 'tool.denied')?.approval).toEqual({
      approved: false,
      by: 'ops',
      reason: 'fraud',
    });
  });

  it('a decision on a listed request applies to that request only', async () => {
    const { guard } = setup();
    await rejection(guard.run(refund(), async () => 1));
    const [listed] = (await guard.approvals()).records;
    if (listed === undefined) throw new Error('no pending approval listed');
    const stale = await guard.decide({ ...listed, owner: 'someone-else' }, true);
    expect(stale.status).toBe('changed');
    expect((await guard.decide(listed, true, { by: 'ops' })).status).toBe('decided');
    expect(await guard.run(refund(), async () => 'ran')).toBe('ran');
    expect((await guard.decide(listed, false)).status).toBe('consumed');
  });

  it('a store without decideApproval is refused before anything is claimed', async () => {
    const inner = new MemoryStore();
    const store: IdempotencyStore = new Proxy(inner, {
      get: (target, property) =>
        property === 'decideApproval' ? undefined : Reflect.get(target, property, target),
    });
    const guard = new Guard({ store, tenant: 'acme' });
    let runs = 0;
    const error = await rejection(
      guard.run(refund(), async () => {
        runs += 1;
      }),
    );
    expect(StoreConfigurationError.isInstance(error)).toBe(true);
    expect(runs).toBe(0);
    expect(inner.size).toBe(0);
  });

  it('a READ_ONLY policy cannot require an approval', async () => {
    const { guard } = setup();
    const error = await rejection(
      guard.run(call({}, { kind: Idempotency.READ_ONLY, approval: 'required' }), async () => 1),
    );
    expect(PolicyError.isInstance(error)).toBe(true);
  });
});
