import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import { call, effectful, rejection, setup, sleep } from './guard.test-support.js';

describe('Guard', () => {
  it('a business key reused with other arguments is a conflict, reported before "in progress"', async () => {
    const { guard } = setup();
    const policy = {
      kind: Idempotency.EFFECTFUL,
      key: (args: Record<string, unknown>) => `refund:${args.orderId}`,
    };
    const holder = guard.run(call({ orderId: 'A-100', amount: 30 }, policy), async () => {
      await sleep(100);
      return 'refunded 30';
    });
    await sleep(5);
    const conflict = await rejection(guard.run(call({ orderId: 'A-100', amount: 50 }, policy), () => 'no'));
    expect(IdempotencyConflictError.isInstance(conflict)).toBe(true);
    expect(await guard.run(call({ orderId: 'A-100', amount: 30 }, policy), () => 'no')).toBe('refunded 30');
    expect(await holder).toBe('refunded 30');
  });

  it('the call key collapses a redelivery but runs two calls with identical arguments', async () => {
    const { guard } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, key: 'call' as const };
    let executions = 0;
    const body = () => ++executions;
    await guard.run(call({ to: 'a@b' }, policy, { callId: 'c1' }), body);
    await guard.run(call({ to: 'a@b' }, policy, { callId: 'c1' }), body);
    await guard.run(call({ to: 'a@b' }, policy, { callId: 'c2' }), body);
    expect(executions).toBe(2);
    const error = await rejection(guard.run(call({ to: 'x@y' }, policy, { callId: 'c1' }), body));
    expect(IdempotencyConflictError.isInstance(error)).toBe(true);
  });

  it('operator resolve settles an indeterminate record; inspect reads it', async () => {
    const { guard } = setup();
    const error = (await rejection(
      guard.run(call({ orderId: 'A-9' }), () => Promise.reject(new Error('gateway timeout'))),
    )) as IndeterminateOutcomeError;
    expect(await guard.inspect(error.key)).toMatchObject({ state: 'indeterminate' });
    expect(await guard.resolve(error.key, { outcome: { refundId: 'r-verified' } })).toEqual({
      status: 'resolved',
    });
    expect(await guard.run(call({ orderId: 'A-9' }), () => 'no')).toEqual({ refundId: 'r-verified' });

    const other = (await rejection(
      guard.run(call({ orderId: 'A-10' }), () => Promise.reject(new Error('gateway timeout'))),
    )) as IndeterminateOutcomeError;
    expect(await guard.resolve(other.key, { released: true })).toEqual({ status: 'resolved' });
    expect(await guard.run(call({ orderId: 'A-10' }), () => 'ran again')).toBe('ran again');
  });

  it('replays through the codec: undefined, Date and class instances', async () => {
    const { guard } = setup();
    class Receipt {
      constructor(
        readonly id: string,
        readonly at: Date,
      ) {}
    }
    const at = new Date('2026-01-02T03:04:05.000Z');
    expect(await guard.run(call({ k: 1 }), () => undefined)).toBeUndefined();
    expect(await guard.run(call({ k: 1 }), () => 'no')).toBeUndefined();
    expect(await guard.run(call({ k: 2 }), () => at)).toBe(at);
    expect(await guard.run(call({ k: 2 }), () => 'no')).toBe('2026-01-02T03:04:05.000Z');
    expect(await guard.run(call({ k: 3 }), () => new Receipt('r', at))).toBeInstanceOf(Receipt);
    expect(await guard.run(call({ k: 3 }), () => 'no')).toEqual({ id: 'r', at: '2026-01-02T03:04:05.000Z' });
  });

  it('an outcome the codec cannot encode makes an EFFECTFUL call indeterminate', async () => {
    const { guard } = setup();
    const error = await rejection(guard.run(call({ k: 1 }), () => ({ big: 10n })));
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reasonType: 'OutcomeEncodingError' });
    const encoding = (error as Error).cause as OutcomeEncodingError;
    expect(OutcomeEncodingError.isInstance(encoding)).toBe(true);
    expect(encoding).toMatchObject({ direction: 'encode', tool: 'refund' });
    expect(encoding.cause).toBeInstanceOf(TypeError);
  });

  it('the caller signal aborts a waiter', async () => {
    const { guard } = setup();
    const holder = guard.run(call({ a: 1 }), () => sleep(300).then(() => 'x'));
    await sleep(5);
    const controller = new AbortController();
    const waiting = guard.run(call({ a: 1 }, effectful, { signal: controller.signal }), () => 'no');
    controller.abort(new Error('user cancelled'));
    expect(await rejection(waiting)).toMatchObject({ message: 'user cancelled' });
    expect(await holder).toBe('x');
  });
});
