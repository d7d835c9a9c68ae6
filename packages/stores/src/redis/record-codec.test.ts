import { describe, expect, it } from 'vitest';
import {
  claimResult,
  completeResult,
  getResult,
  renewResult,
  resolveResult,
  UnexpectedReplyError,
} from './record-codec.js';

const ref = { tenant: 'acme', key: 'k' };
const recordFields = ['completed', 2, 3, 'owner-1', 1000, 2000, 'tool', 'fp', 'out', null, null];

describe('script replies', () => {
  it('maps claim codes to results, with the record and the Redis clock', () => {
    expect(claimResult(ref, [1, 5, 1, 1, 105, 0])).toEqual({
      status: 'acquired',
      fence: 1,
      attempt: 1,
      leaseExpiresAtMs: 105,
      takeover: false,
    });
    expect(claimResult(ref, [1, 5, 2, 2, 105, 1])).toMatchObject({ takeover: true, fence: 2 });
    expect(claimResult(ref, [2, 5, ...recordFields])).toEqual({
      status: 'completed',
      record: {
        key: 'k',
        tenant: 'acme',
        state: 'completed',
        fence: 2,
        attempt: 3,
        owner: 'owner-1',
        leaseExpiresAtMs: 1000,
        expiresAtMs: 2000,
        tool: 'tool',
        fingerprint: 'fp',
        outcome: 'out',
      },
    });
    const busy = claimResult(ref, [3, 7, 'in_progress', 1, 1, 'o', 100, 200, 't', 'f', null, null, null]);
    expect(busy).toMatchObject({ status: 'busy', nowMs: 7 });
    const marked = claimResult(ref, [
      4,
      7,
      'indeterminate',
      1,
      1,
      'o',
      1,
      2,
      't',
      'f',
      null,
      'LeaseExpired',
      'm',
    ]);
    expect(marked).toMatchObject({
      status: 'indeterminate',
      record: { error: { type: 'LeaseExpired', message: 'm' } },
    });
    expect(claimResult(ref, [6, 7, ...recordFields]).status).toBe('conflict');
  });

  it('maps holder replies', () => {
    expect(renewResult([10, 1, 99])).toEqual({ status: 'renewed', leaseExpiresAtMs: 99 });
    expect(renewResult([12, 1])).toEqual({ status: 'lost', reason: 'stale' });
    expect(renewResult([13, 1])).toEqual({ status: 'lost', reason: 'settled' });
    expect(renewResult([11, 1])).toEqual({ status: 'lost', reason: 'not_found' });
    expect(completeResult(ref, [13, 1, ...recordFields]).status).toBe('stale');
    expect(completeResult(ref, [11, 1])).toEqual({ status: 'not_found' });
    expect(resolveResult(ref, [14, 1, ...recordFields]).status).toBe('not_resolvable');
    expect(resolveResult(ref, [16, 1, ...recordFields]).status).toBe('changed');
    expect(getResult(ref, [11, 42])).toEqual({ record: null, nowMs: 42 });
  });

  it('refuses replies no script sends', () => {
    expect(() => claimResult(ref, [99, 1])).toThrow(UnexpectedReplyError);
    expect(() => claimResult(ref, 'OK')).toThrow(UnexpectedReplyError);
    expect(() =>
      claimResult(ref, [2, 1, 'weird-state', 1, 1, 'o', 1, 2, 't', 'f', null, null, null]),
    ).toThrow(UnexpectedReplyError);
    expect(() => renewResult([10, 1, 'not a number'])).toThrow(UnexpectedReplyError);
  });
});
