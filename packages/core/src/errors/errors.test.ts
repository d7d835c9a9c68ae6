import { describe, expect, it } from 'vitest';
import * as core from '../index.js';

describe('errors', () => {
  const samples = [
    new core.CanonicalizationError('/a/0', 'NaN is not a JSON number'),
    new core.KeyDerivationError('refund', 'missing', { argument: 'orderId' }),
    new core.PolicyError('leaseMs', 'must be positive', { tool: 'refund' }),
    new core.IdempotencyConflictError('k', 'refund', 'refund'),
    new core.IndeterminateOutcomeError({
      key: 'k',
      tool: 'refund',
      attempt: 1,
      fence: 1,
      reasonType: 'E',
      reason: 'r',
    }),
    new core.ExecutionAbandonedError({ key: 'k', tool: 'refund', attempt: 3, fence: 3 }),
    new core.StepStoppedError([
      {
        key: 'k1',
        tool: 'refund',
        callId: 'call_a',
        error: new core.ExecutionAbandonedError({ key: 'k1', tool: 'refund', attempt: 3, fence: 3 }),
      },
      {
        key: 'k2',
        tool: 'refund',
        callId: 'call_b',
        error: new core.ExecutionAbandonedError({ key: 'k2', tool: 'refund', attempt: 3, fence: 4 }),
      },
    ]),
    new core.OutcomePendingError({ key: 'k', tool: 'refund', waitedMs: 10 }),
    new core.ToolTimeoutError('refund', 100),
    new core.StoreUnavailableError('claim', 'ECONNREFUSED'),
    new core.LeaseLostError({ key: 'k', tool: 'refund', fence: 1, reason: 'taken over' }),
  ];

  it('each has its own code, name and class check, and all are ToolfenceErrors', () => {
    const codes = samples.map((error) => error.code);
    expect(new Set(codes).size).toBe(samples.length);
    for (const error of samples) {
      expect(core.ToolfenceError.isInstance(error)).toBe(true);
      expect(error).toBeInstanceOf(Error);
      const ctor = error.constructor as typeof core.ToolfenceError;
      expect(ctor.isInstance(error)).toBe(true);
      expect(error.name).toBe(ctor.name);
      for (const other of samples) {
        if (other.constructor !== ctor) expect(ctor.isInstance(other)).toBe(false);
      }
    }
  });

  it('are recognised across two copies of the package (Symbol.for marker), not by instanceof', () => {
    // What a second copy of @toolfence/core would throw: another class with the same marker.
    const marker = Symbol.for('toolfence.error');
    const foreign = Object.assign(new Error('x'), { [marker]: true, code: 'INDETERMINATE_OUTCOME' });
    expect(foreign instanceof core.IndeterminateOutcomeError).toBe(false);
    expect(core.IndeterminateOutcomeError.isInstance(foreign)).toBe(true);
    expect(core.ExecutionAbandonedError.isInstance(foreign)).toBe(false);
    expect(core.ToolfenceError.isInstance(new Error('plain'))).toBe(false);
    expect(core.ToolfenceError.isInstance(null)).toBe(false);
  });

  it('keeps the cause and tells an operator or a model what to do', () => {
    const cause = new Error('socket hang up');
    const error = new core.IndeterminateOutcomeError(
      {
        key: 'abc',
        tool: 'refund',
        attempt: 1,
        fence: 1,
        reasonType: 'ECONNRESET',
        reason: 'socket hang up',
      },
      { cause },
    );
    expect(error.cause).toBe(cause);
    expect(error.message).toMatch(/may have happened/);
    expect(error.message).toMatch(/do not simply retry/);
    expect(error.message).toMatch(/verify with the system it touched/);
  });
});
