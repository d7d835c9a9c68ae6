import { describe, expect, it } from 'vitest';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import { currentToolCall } from './call-context.js';
import { call, effectful, idempotent, rejection, setup, sleep } from './guard.test-support.js';
import { WITHHELD } from './recorded-error.js';

describe('Guard', () => {
  it('runs a first call once and replays the recorded outcome without entering the body', async () => {
    const { guard, types, events } = setup();
    let executions = 0;
    const body = async () => {
      executions += 1;
      return { refundId: 'r-1', amount: 30 };
    };
    expect(await guard.run(call({ orderId: 'A-100', amount: 30 }), body)).toEqual({
      refundId: 'r-1',
      amount: 30,
    });
    expect(await guard.run(call({ amount: 30, orderId: 'A-100' }), body)).toEqual({
      refundId: 'r-1',
      amount: 30,
    });
    expect(executions).toBe(1);
    expect(types()).toEqual(['tool.started', 'tool.completed', 'tool.deduplicated']);
    expect(events[0]).toMatchObject({ tool: 'refund', tenant: 'acme', runId: 'run-1', attempt: 1, fence: 1 });
    expect(events[0]?.key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('READ_ONLY runs the body every time and records nothing', async () => {
    const { guard, store, types } = setup();
    let executions = 0;
    const policy = { kind: Idempotency.READ_ONLY };
    const seen: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      await guard.run(call({ q: 1 }, policy, { callId: `c${i}` }), () => {
        seen.push(currentToolCall()?.callId);
        return ++executions;
      });
    }
    expect(executions).toBe(3);
    expect(seen).toEqual(['c0', 'c1', 'c2']);
    expect(types()).toEqual([]);
    expect((store as MemoryStore).size).toBe(0);
  });

  it('gives the body its context through currentToolCall()', async () => {
    const { guard } = setup();
    const seen = await guard.run(call({ orderId: 'A-1' }, effectful, { callId: 'call-9' }), async () => {
      await sleep(1);
      const context = currentToolCall();
      return { ...context, signal: context?.signal.aborted };
    });
    expect(seen).toMatchObject({
      attempt: 1,
      fence: 1,
      tenant: 'acme',
      runId: 'run-1',
      callId: 'call-9',
      tool: 'refund',
      signal: false,
    });
    expect((seen as { idempotencyKey: string }).idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
    expect(currentToolCall()).toBeUndefined();
  });

  it('200 concurrent identical EFFECTFUL calls run the body once and all get the same result', async () => {
    const { guard, types } = setup();
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        guard.run(call({ orderId: 'A-200' }), async () => {
          executions += 1;
          await sleep(50);
          return { refundId: `r-${executions}` };
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(new Set(results.map((r) => JSON.stringify(r)))).toEqual(new Set(['{"refundId":"r-1"}']));
    expect(types().filter((t) => t === 'tool.deduplicated')).toHaveLength(199);
    expect(types().filter((t) => t === 'tool.waiting')).toHaveLength(199);
  });

  it('EFFECTFUL failure: claim kept as indeterminate, never re-run', async () => {
    const { guard, store, types } = setup();
    let executions = 0;
    const body = async () => {
      executions += 1;
      throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    };
    const first = await rejection(guard.run(call({ orderId: 'A-1' }), body));
    expect(IndeterminateOutcomeError.isInstance(first)).toBe(true);
    expect(first).toMatchObject({ reasonType: 'ECONNRESET', attempt: 1, fence: 1, tool: 'refund' });
    expect((first as Error).cause).toMatchObject({ code: 'ECONNRESET' });
    const second = await rejection(guard.run(call({ orderId: 'A-1' }), body));
    expect(IndeterminateOutcomeError.isInstance(second)).toBe(true);
    expect(executions).toBe(1);
    const key = (first as IndeterminateOutcomeError).key;
    expect(await store.get({ tenant: 'acme', key })).toMatchObject({
      state: 'indeterminate',
      // Issue 30, item 6: the type and code, never the message (no describeError hook).
      error: { type: 'ECONNRESET', message: WITHHELD },
    });
    expect(types()).toEqual(['tool.started', 'tool.indeterminate', 'tool.indeterminate']);
  });

  it('EFFECTFUL no-effect error releases the claim so the call may run again', async () => {
    const { guard } = setup();
    class ValidationRefused extends Error {
      override name = 'ValidationRefused';
    }
    const policy: IdempotencyPolicy = {
      kind: Idempotency.EFFECTFUL,
      isNoEffectError: (error) => error instanceof ValidationRefused,
    };
    let executions = 0;
    const body = async () => {
      executions += 1;
      if (executions === 1) throw new ValidationRefused('amount too large');
      return 'ok';
    };
    const error = await rejection(guard.run(call({ orderId: 'A-1' }, policy), body));
    expect(error).toBeInstanceOf(ValidationRefused);
    expect(await guard.run(call({ orderId: 'A-1' }, policy), body)).toBe('ok');
    expect(executions).toBe(2);
  });

  it('an isNoEffectError that throws is treated as "may have happened"', async () => {
    const { guard } = setup();
    const policy: IdempotencyPolicy = {
      kind: Idempotency.EFFECTFUL,
      isNoEffectError: () => {
        throw new Error('predicate bug');
      },
    };
    const error = await rejection(guard.run(call({ a: 1 }, policy), () => Promise.reject(new Error('x'))));
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
  });

  it('IDEMPOTENT failure: claim released, error rethrown, the next call runs', async () => {
    const { guard, types } = setup();
    let executions = 0;
    const body = async () => {
      executions += 1;
      if (executions === 1) throw new TypeError('flaky');
      return executions;
    };
    expect(await rejection(guard.run(call({ id: 1 }, idempotent), body))).toBeInstanceOf(TypeError);
    expect(await guard.run(call({ id: 1 }, idempotent), body)).toBe(2);
    expect(types()).toEqual(['tool.started', 'tool.failed', 'tool.started', 'tool.completed']);
  });

  it('a missing key argument fails closed: KeyDerivationError, body not run, nothing claimed', async () => {
    const { guard, store } = setup();
    let executions = 0;
    const policy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] };
    for (const args of [{}, { orderId: undefined }]) {
      const error = await rejection(guard.run(call(args, policy), () => ++executions));
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ argument: 'orderId' });
    }
    expect(executions).toBe(0);
    expect((store as MemoryStore).size).toBe(0);
  });

  it('an invalid policy is a PolicyError before anything is claimed', async () => {
    const { guard, store } = setup();
    const bad = { kind: Idempotency.EFFECTFUL, leaseMs: 1000, heartbeatMs: 1000 };
    const error = await rejection(guard.run(call({ a: 1 }, bad), () => 1));
    expect(PolicyError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ field: 'heartbeatMs' });
    expect((store as MemoryStore).size).toBe(0);
    expect(() =>
      guard.checkPolicy(
        { kind: Idempotency.EFFECTFUL, keyArguments: ['nope'] },
        {
          tool: 'refund',
          parameterNames: ['orderId'],
        },
      ),
    ).toThrow(/not a parameter/);
  });

  it('an unreachable store fails closed with StoreUnavailableError, body not run', async () => {
    const store = new MemoryStore();
    await store.close();
    const { guard } = setup({ store });
    let executions = 0;
    const error = await rejection(guard.run(call({ a: 1 }), () => ++executions));
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect(executions).toBe(0);
  });

  it('a store that throws an untyped error is reported as StoreUnavailableError', async () => {
    const store = new MemoryStore();
    store.claim = async () => {
      throw new Error('ECONNREFUSED 127.0.0.1:6379');
    };
    const { guard } = setup({ store });
    const error = await rejection(guard.run(call({ a: 1 }), () => 1));
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ operation: 'claim' });
  });
});
