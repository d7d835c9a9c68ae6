// Field case C08 (docs/field-cases.md, C08) on MemoryStore.
import {
  Guard,
  Idempotency,
  IdempotencyConflictError,
  type IdempotencyPolicy,
  MemoryStore,
  OutcomePendingError,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('C08: concurrent reuse of a business key', () => {
  const policy: IdempotencyPolicy = {
    kind: Idempotency.EFFECTFUL,
    key: (args) => `refund:${String(args.orderId)}`,
    scope: 'tenant',
  };
  const X = { orderId: 'A-100', amount: 30 };
  const Y = { orderId: 'A-100', amount: 99 };

  it('B with other arguments gets a conflict (not "in progress"); C with the same waits for A', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'shop' });
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(300);
      return { refundId: 'r-1' };
    };
    const a = guard.run({ tool: 'refund', arguments: X, policy }, body);
    // A holds the key once its body runs.
    while (executions === 0) await sleep(5);

    const b = await guard.run({ tool: 'refund', arguments: Y, policy }, body).catch((e: unknown) => e);
    expect(IdempotencyConflictError.isInstance(b)).toBe(true);
    expect(b).toMatchObject({ tool: 'refund', recordedTool: 'refund' });

    const cPending = await guard
      .run({ tool: 'refund', arguments: X, policy: { ...policy, waitTimeoutMs: 50 } }, body)
      .catch((e: unknown) => e);
    expect(OutcomePendingError.isInstance(cPending)).toBe(true);
    expect((cPending as Error).message).toMatch(/pending, not failed/);

    const c = guard.run({ tool: 'refund', arguments: X, policy }, body);
    expect(await a).toEqual({ refundId: 'r-1' });
    expect(await c).toEqual({ refundId: 'r-1' });
    expect(executions).toBe(1);
  });

  it('after A completes, B with other arguments still conflicts', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'shop' });
    await guard.run({ tool: 'refund', arguments: X, policy }, () => 'done');
    const b = await guard.run({ tool: 'refund', arguments: Y, policy }, () => 'no').catch((e: unknown) => e);
    expect(IdempotencyConflictError.isInstance(b)).toBe(true);
  });

  it('the same business key for another tool conflicts; another tenant does not share it', async () => {
    const store = new MemoryStore();
    const guard = new Guard({ store, tenant: 'shop' });
    await guard.run({ tool: 'refund', arguments: X, policy }, () => 'done');
    // Keys are per tool, so another tool with the same business key is its own key...
    expect(await guard.run({ tool: 'email', arguments: X, policy }, () => 'emailed')).toBe('emailed');
    // ...and another tenant never shares a key.
    expect(
      await guard.run({ tool: 'refund', arguments: Y, policy, tenant: 'other-shop' }, () => 'other'),
    ).toBe('other');
  });
});
