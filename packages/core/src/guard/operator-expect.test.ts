// guard.resolve settles only the record the operator looked at: `expect` (the holder an earlier
// read showed), else the holder the guard reads just before it resolves.
import { describe, expect, it } from 'vitest';
import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { StoreInputError } from '../errors/store-input-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { Holder, IdempotencyRecord, RecordRef } from '../store/idempotency-store.js';
import { Guard } from './guard.js';
import type { GuardEvent } from './guard-events.js';

const DAY_MS = 86_400_000;
const effectful: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };

/** A MemoryStore that runs `afterGet` once, after the next `get` answered (before the caller goes on). */
class SteppedStore extends MemoryStore {
  afterGet: (() => Promise<void>) | undefined;
  override async get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    const record = await super.get(ref);
    const step = this.afterGet;
    this.afterGet = undefined;
    await step?.();
    return record;
  }
}

function setup() {
  const store = new SteppedStore();
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, tenant: 'acme', onEvent: (event) => events.push(event) });
  const fail = () =>
    guard
      .run({ tool: 'refund', arguments: { orderId: 'A-1' }, runId: 'run-1', policy: effectful }, () =>
        Promise.reject(new Error('gateway timeout')),
      )
      .then(
        () => expect.unreachable('the call should have been indeterminate'),
        (error: IndeterminateOutcomeError) => error,
      );
  const holderOf = async (key: string): Promise<Holder> => {
    const record = (await guard.inspect(key)) as IdempotencyRecord;
    return { fence: record.fence, owner: record.owner };
  };
  /** Another operator releases the record, and the same call runs again and times out again. */
  const relive = async (key: string, seen: Holder) => {
    expect(await store.resolve({ tenant: 'acme', key }, { released: true, expect: seen }, DAY_MS)).toEqual({
      status: 'resolved',
    });
    await fail();
  };
  const resolvedEvents = () => events.filter((event) => event.type === 'tool.resolved');
  return { store, guard, fail, holderOf, relive, resolvedEvents };
}

describe('guard.resolve with the holder the operator saw', () => {
  it('expect from an earlier look: a new life of the key (fence 1 again) is changed, untouched', async () => {
    const { guard, fail, holderOf, relive, resolvedEvents } = setup();
    const { key } = await fail();
    const seen = await holderOf(key);
    await relive(key, seen);
    const now = await guard.inspect(key);
    expect(now).toMatchObject({ state: 'indeterminate', fence: seen.fence });
    expect(now?.owner).not.toBe(seen.owner);
    expect(await guard.resolve(key, { outcome: { refundId: 'r-old' } }, { expect: seen })).toEqual({
      status: 'changed',
      record: now,
    });
    expect(await guard.inspect(key)).toEqual(now);
    expect(resolvedEvents()).toEqual([]);
    expect(await guard.resolutions(key)).toHaveLength(1); // the other operator's release only
    const current = await holderOf(key);
    expect(
      await guard.resolve(key, { outcome: { refundId: 'r-new' } }, { by: 'ana', expect: current }),
    ).toEqual({ status: 'resolved' });
    expect(resolvedEvents()).toMatchObject([
      { key, fence: current.fence, resolution: { action: 'completed' } },
    ]);
    expect((await guard.inspect(key))?.owner).toBe(current.owner);
  });

  it('without expect, the holder the guard read: a record re-lived between its read and its write is changed', async () => {
    const { store, guard, fail, holderOf, relive, resolvedEvents } = setup();
    const { key } = await fail();
    const seen = await holderOf(key);
    store.afterGet = () => relive(key, seen);
    const result = await guard.resolve(key, { released: true });
    expect(result.status).toBe('changed');
    const now = await guard.inspect(key);
    expect(now).toMatchObject({ state: 'indeterminate', fence: 1 });
    expect(now?.owner).not.toBe(seen.owner);
    expect(resolvedEvents()).toEqual([]);
  });

  it('the answer the read already gives is not written; a bad expect is refused before any I/O', async () => {
    const { guard, fail, holderOf } = setup();
    expect(await guard.resolve('0'.repeat(64), { released: true })).toEqual({ status: 'not_found' });
    const { key } = await fail();
    const seen = await holderOf(key);
    for (const bad of [{ fence: 0, owner: seen.owner }, { fence: 1, owner: '' }, null]) {
      await expect(
        guard.resolve(key, { released: true }, { expect: bad as unknown as Holder }),
      ).rejects.toSatisfy((thrown: unknown) => StoreInputError.isInstance(thrown));
    }
    expect(await guard.resolve(key, { outcome: 1 }, { expect: seen })).toEqual({ status: 'resolved' });
    const record = await guard.inspect(key);
    expect(await guard.resolve(key, { outcome: 2 }, { expect: seen })).toEqual({
      status: 'not_resolvable',
      record,
    });
    expect(await guard.resolutions(key)).toHaveLength(1);
  });
});
