import { describe, expect, it } from 'vitest';
import { PolicyError } from '../errors/policy-error.js';
import { definePolicy, Idempotency, resolvePolicy } from './idempotency-policy.js';

describe('resolvePolicy', () => {
  it('fills in the documented defaults', () => {
    expect(resolvePolicy({ kind: Idempotency.EFFECTFUL })).toMatchObject({
      kind: 'effectful',
      key: 'arguments',
      scope: 'run',
      keyArguments: undefined,
      leaseMs: 30_000,
      heartbeatMs: 10_000,
      maxAttempts: 3,
      retentionMs: 86_400_000,
      timeoutMs: undefined,
      waitTimeoutMs: 60_000,
    });
  });

  it('lets a policy override guard-wide defaults, and derives heartbeat and wait from its own lease', () => {
    const defaults = { leaseMs: 9000, heartbeatMs: 1000, waitTimeoutMs: 5000, maxAttempts: 5 };
    expect(resolvePolicy({ kind: Idempotency.IDEMPOTENT }, defaults)).toMatchObject({
      leaseMs: 9000,
      heartbeatMs: 1000,
      waitTimeoutMs: 5000,
      maxAttempts: 5,
    });
    expect(resolvePolicy({ kind: Idempotency.IDEMPOTENT, leaseMs: 600 }, defaults)).toMatchObject({
      leaseMs: 600,
      heartbeatMs: 200,
      waitTimeoutMs: 1200,
    });
  });

  const invalid: [string, Record<string, unknown>, string][] = [
    ['unknown kind', { kind: 'sometimes' }, 'kind'],
    ['zero lease', { leaseMs: 0 }, 'leaseMs'],
    ['negative lease', { leaseMs: -5 }, 'leaseMs'],
    ['fractional ms', { leaseMs: 10.5 }, 'leaseMs'],
    ['NaN timeout', { timeoutMs: Number.NaN }, 'timeoutMs'],
    ['string ms', { retentionMs: '1000' }, 'retentionMs'],
    ['heartbeat equal to lease', { leaseMs: 1000, heartbeatMs: 1000 }, 'heartbeatMs'],
    ['heartbeat longer than lease', { leaseMs: 1000, heartbeatMs: 5000 }, 'heartbeatMs'],
    ['maxAttempts 0', { maxAttempts: 0 }, 'maxAttempts'],
    ['maxAttempts 1.5', { maxAttempts: 1.5 }, 'maxAttempts'],
    ['retention shorter than lease', { leaseMs: 5000, retentionMs: 1000 }, 'retentionMs'],
    ['empty keyArguments', { keyArguments: [] }, 'keyArguments'],
    ['empty key argument name', { keyArguments: [''] }, 'keyArguments'],
    ['duplicated key argument', { keyArguments: ['a', 'a'] }, 'keyArguments'],
    ['keyArguments with a call key', { keyArguments: ['a'], key: 'call' }, 'keyArguments'],
    ['unknown key strategy', { key: 'random' }, 'key'],
    ['unknown scope', { scope: 'global' }, 'scope'],
    ['isNoEffectError not a function', { isNoEffectError: true }, 'isNoEffectError'],
  ];
  for (const [name, fields, field] of invalid) {
    it(`refuses ${name} with a PolicyError naming ${field}`, () => {
      const error = (() => {
        try {
          resolvePolicy({ kind: Idempotency.EFFECTFUL, ...fields } as never, {}, { tool: 'refund' });
        } catch (e) {
          return e;
        }
        return undefined;
      })();
      expect(PolicyError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ field, tool: 'refund', code: 'INVALID_POLICY' });
      expect((error as Error).message).toContain('refund');
    });
  }

  it('refuses a key argument that is not a parameter of the tool, naming the parameters', () => {
    expect(() =>
      resolvePolicy(
        { kind: Idempotency.EFFECTFUL, keyArguments: ['order_id'] },
        {},
        { tool: 'refund', parameterNames: ['orderId', 'amount'] },
      ),
    ).toThrow(/"order_id", which is not a parameter of the tool \(parameters: orderId, amount\)/);
    expect(
      resolvePolicy(
        { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] },
        {},
        { parameterNames: ['orderId', 'amount'] },
      ).keyArguments,
    ).toEqual(['orderId']);
  });

  it('refuses invalid guard-wide defaults', () => {
    expect(() => resolvePolicy({ kind: Idempotency.IDEMPOTENT }, { leaseMs: -1 })).toThrow(PolicyError);
  });

  it('definePolicy checks where the policy is written and returns it unchanged', () => {
    const policy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] } as const;
    expect(definePolicy(policy)).toBe(policy);
    expect(() => definePolicy({ kind: Idempotency.EFFECTFUL, heartbeatMs: 40_000 })).toThrow(PolicyError);
  });
});
