import { describe, expect, it } from 'vitest';
import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import { StoreInputError } from '../errors/store-input-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { MAX_DESCRIPTION_LENGTH } from '../store/store-input.js';
import { Guard } from './guard.js';
import type { GuardEvent } from './guard-events.js';

type Refund = { orderId: string; amount: number; currency?: string };
const describeRefund = (args: Refund) => `refund ${args.orderId} ${args.currency ?? 'EUR'} ${args.amount}`;

function setup(
  policy: IdempotencyPolicy<Refund> = { kind: Idempotency.EFFECTFUL, describe: describeRefund },
) {
  const store = new MemoryStore();
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, tenant: 'acme', onEvent: (event) => events.push(event) });
  const fail = (args: Refund, extra: object = {}) =>
    guard
      .run(
        {
          tool: 'refund',
          arguments: args,
          runId: 'run-1',
          callId: 'call-1',
          policy: policy as unknown as IdempotencyPolicy,
          ...extra,
        },
        () => Promise.reject(new Error('gateway timeout')),
      )
      .then(
        () => expect.unreachable('the call should have been indeterminate'),
        (error: IndeterminateOutcomeError) => error,
      );
  return { store, guard, events, fail };
}

describe('Guard operator API', () => {
  it('records the run, call and policy description with the claim', async () => {
    const { guard, fail } = setup();
    const error = await fail({ orderId: 'A-100', amount: 30 });
    expect(await guard.inspect(error.key)).toMatchObject({
      state: 'indeterminate',
      runId: 'run-1',
      callId: 'call-1',
      description: 'refund A-100 EUR 30',
    });
  });

  it('a describe that throws or returns no text leaves no description, and the call is not lost', async () => {
    for (const describe of [
      () => {
        throw new Error('bad describe');
      },
      () => 42 as unknown as string,
      () => '',
    ]) {
      const { guard, fail } = setup({ kind: Idempotency.EFFECTFUL, describe });
      const error = await fail({ orderId: 'A-1', amount: 1 });
      const record = await guard.inspect(error.key);
      expect(record?.state).toBe('indeterminate');
      expect(record).not.toHaveProperty('description');
    }
  });

  it('a long or malformed description is cut to MAX_DESCRIPTION_LENGTH and made well-formed', async () => {
    const long = `${'x'.repeat(MAX_DESCRIPTION_LENGTH - 1)}😀tail`;
    const { guard, fail } = setup({ kind: Idempotency.EFFECTFUL, describe: () => long });
    const record = await guard.inspect((await fail({ orderId: 'A-2', amount: 2 })).key);
    expect(record?.description).toBe('x'.repeat(MAX_DESCRIPTION_LENGTH - 1));
    const odd = setup({ kind: Idempotency.EFFECTFUL, describe: () => 'a\u0000b\uD800c' });
    const oddRecord = await odd.guard.inspect((await odd.fail({ orderId: 'A-3', amount: 3 })).key);
    expect(oddRecord?.description).toBe('a\uFFFDb\uFFFDc');
  });

  it('resolve keeps who and why, emits tool.resolved, and lists and reads the history', async () => {
    const { guard, events, fail } = setup();
    const error = await fail({ orderId: 'A-9', amount: 9 });
    const page = await guard.list();
    expect(page.records.map((record) => record.key)).toEqual([error.key]);
    expect(page.records[0]).not.toHaveProperty('outcome');
    expect(await guard.list({ tenant: 'other' })).toMatchObject({ records: [] });
    expect(
      await guard.resolve(
        error.key,
        { released: true },
        { by: 'ana@example.com', reason: 'not in the ledger' },
      ),
    ).toEqual({ status: 'resolved' });
    const resolved = events.filter((event) => event.type === 'tool.resolved');
    expect(resolved).toHaveLength(1);
    expect(resolved[0]).toMatchObject({
      key: error.key,
      tool: 'refund',
      tenant: 'acme',
      runId: 'run-1',
      callId: 'call-1',
      attempt: 1,
      fence: 1,
      resolution: { action: 'released', by: 'ana@example.com', reason: 'not in the ledger' },
    });
    expect(await guard.resolutions(error.key)).toMatchObject([
      { action: 'released', fromState: 'indeterminate', by: 'ana@example.com', reason: 'not in the ledger' },
    ]);
    expect((await guard.list()).records).toEqual([]);
  });

  it('a resolve that changes nothing emits nothing; bad audit text is refused before any I/O', async () => {
    const { guard, events, fail } = setup();
    expect(await guard.resolve('0'.repeat(64), { outcome: 1 })).toEqual({ status: 'not_found' });
    const error = await fail({ orderId: 'A-5', amount: 5 });
    await expect(guard.resolve(error.key, { outcome: 1 }, { reason: 'r'.repeat(5000) })).rejects.toSatisfy(
      (thrown: unknown) => StoreInputError.isInstance(thrown),
    );
    await expect(guard.list({ limit: 0 })).rejects.toSatisfy((thrown: unknown) =>
      StoreInputError.isInstance(thrown),
    );
    expect(events.filter((event) => event.type === 'tool.resolved')).toEqual([]);
    expect((await guard.inspect(error.key))?.state).toBe('indeterminate');
  });

  it('a store without list or resolutions is a StoreConfigurationError', async () => {
    const memory = new MemoryStore();
    const bare = new Proxy(memory, {
      get: (target, name) =>
        name === 'list' || name === 'resolutions' ? undefined : Reflect.get(target, name, target),
    }) as IdempotencyStore;
    const guard = new Guard({ store: bare });
    await expect(guard.list()).rejects.toSatisfy((e: unknown) => StoreConfigurationError.isInstance(e));
    await expect(guard.resolutions('k')).rejects.toSatisfy((e: unknown) =>
      StoreConfigurationError.isInstance(e),
    );
  });
});
