// The fault suite's index check must bite: fed a listing that leaves a record out, lists a
// deleted one, repeats a key or disagrees on a state, it counts each; against a real RedisStore
// whose listing index was removed under it, it reports every record missing.
import type { Holder, IdempotencyRecord, ListedRecord } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tenantNames } from '../../packages/stores/src/redis/names.js';
import { connectRedis, deletePrefix, randomPrefix } from '../support/redis.js';
import { checkIndex, listEveryRecord } from './index-check.js';

function record(key: string, state: IdempotencyRecord['state'], fence = 1): IdempotencyRecord {
  return {
    key,
    tenant: 't',
    tool: 'refund',
    fingerprint: 'f'.repeat(64),
    state,
    fence,
    attempt: fence,
    owner: `owner-${key}-${fence}`,
    leaseExpiresAtMs: 0,
    expiresAtMs: 0,
  };
}

function listed(entry: IdempotencyRecord): ListedRecord {
  const { outcome: _outcome, ...rest } = entry;
  return rest;
}

describe('checkIndex', () => {
  const a = record('a'.repeat(64), 'completed');
  const b = record('b'.repeat(64), 'indeterminate', 2);
  const c = record('c'.repeat(64), 'in_progress');
  const records = new Map<string, IdempotencyRecord | null>([
    [a.key, a],
    [b.key, b],
    [c.key, c],
    ['d'.repeat(64), null],
  ]);

  it('passes a listing that holds every live record once, as get returns it', () => {
    const check = checkIndex(records, [a, b, c].map(listed));
    expect(check).toEqual({
      records: 3,
      listed: 3,
      missing: 0,
      phantom: 0,
      repeated: 0,
      disagreeing: 0,
      violations: [],
    });
  });

  it('counts a missing record, a phantom, a repeated key and a disagreeing state or fence', () => {
    const phantom = record('d'.repeat(64), 'indeterminate');
    const stale = { ...listed(b), fence: 1 };
    const check = checkIndex(records, [listed(a), listed(a), stale, listed(phantom)]);
    expect(check).toMatchObject({
      records: 3,
      listed: 4,
      missing: 1,
      phantom: 1,
      repeated: 1,
      disagreeing: 1,
    });
    expect(check.violations).toHaveLength(4);
    expect(check.violations.join('\n')).toContain(
      `key ${c.key.slice(0, 12)} (in_progress, fence 1) is not listed`,
    );
  });

  it('counts a listing with another state than get', () => {
    const check = checkIndex(records, [listed(a), { ...listed(b), state: 'abandoned' }, listed(c)]);
    expect(check).toMatchObject({ missing: 0, phantom: 0, disagreeing: 1 });
  });
});

describe('checkIndex on a real RedisStore', () => {
  let admin: Redis;
  const prefix = randomPrefix('index-check');
  beforeAll(async () => {
    admin = await connectRedis();
  });
  afterAll(async () => {
    await deletePrefix(admin, prefix);
    admin.disconnect();
  });

  it('agrees on a store left alone, and reports every record missing once its index is gone', async () => {
    const store = new RedisStore({ client: admin, prefix });
    const tenant = 'index-check';
    const keys = ['1', '2', '3'].map((digit) => digit.repeat(64));
    const options = {
      tool: 'refund',
      fingerprint: 'f'.repeat(64),
      leaseMs: 60_000,
      retentionMs: 3_600_000,
      mode: 'at-most-once' as const,
      maxAttempts: 1,
      checkFingerprint: true,
    };
    const holders: Holder[] = [];
    for (const key of keys) {
      const claim = await store.claim({ tenant, key }, { ...options, owner: `owner-${key.slice(0, 1)}` });
      if (claim.status !== 'acquired') throw new Error(`claim answered ${claim.status}`);
      holders.push({ fence: claim.fence, owner: `owner-${key.slice(0, 1)}` });
    }
    await store.complete({ tenant, key: keys[0] as string }, holders[0] as Holder, '"done"', 3_600_000);
    await store.markIndeterminate(
      { tenant, key: keys[1] as string },
      holders[1] as Holder,
      { type: 'Timeout', message: 'no reply' },
      3_600_000,
    );
    const records = new Map<string, IdempotencyRecord | null>();
    for (const key of keys) records.set(key, await store.get({ tenant, key }));

    const before = checkIndex(records, await listEveryRecord(store, tenant));
    expect(before).toMatchObject({ records: 3, listed: 3, missing: 0, phantom: 0, disagreeing: 0 });

    await admin.del(tenantNames(prefix, tenant).index);
    const after = checkIndex(records, await listEveryRecord(store, tenant));
    expect(after).toMatchObject({ records: 3, listed: 0, missing: 3 });
  });
});
