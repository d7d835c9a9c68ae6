import { describe, expect, it } from 'vitest';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import { currentToolCall } from './call-context.js';
import { Guard } from './guard.js';
import { call, idempotent, rejection, setup } from './guard.test-support.js';

describe('Guard under hostile input and failures', () => {
  it('a repeat whose arguments outside keyArguments differ replays the outcome and says argumentsDiffer', async () => {
    const { guard, events } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] };
    expect(await guard.run(call({ orderId: 'A', amount: 30 }, policy), () => 'refunded 30')).toBe(
      'refunded 30',
    );
    expect(await guard.run(call({ orderId: 'A', amount: 30 }, policy), () => 'must not run')).toBe(
      'refunded 30',
    );
    expect(await guard.run(call({ orderId: 'A', amount: 99 }, policy), () => 'must not run')).toBe(
      'refunded 30',
    );
    const dedups = events.filter((event) => event.type === 'tool.deduplicated');
    expect(dedups.map((event) => event.argumentsDiffer)).toEqual([undefined, true]);
  });

  it("onArgumentsMismatch: 'conflict' refuses a repeat whose other arguments differ, as business keys do", async () => {
    const { guard } = setup();
    const policy = {
      kind: Idempotency.EFFECTFUL,
      keyArguments: ['orderId'],
      onArgumentsMismatch: 'conflict' as const,
    };
    expect(await guard.run(call({ orderId: 'A', amount: 30 }, policy), () => 'refunded 30')).toBe(
      'refunded 30',
    );
    expect(await guard.run(call({ orderId: 'A', amount: 30 }, policy), () => 'must not run')).toBe(
      'refunded 30',
    );
    const conflict = await rejection(
      guard.run(call({ orderId: 'A', amount: 99 }, policy), () => 'must not run'),
    );
    expect(IdempotencyConflictError.isInstance(conflict)).toBe(true);
    // Arguments that cannot be compared cannot be checked: refused before anything is claimed.
    const unhashable = await rejection(guard.run(call({ orderId: 'B', blob: new Map() }, policy), () => 'x'));
    expect(KeyDerivationError.isInstance(unhashable)).toBe(true);
    expect(() =>
      new Guard({ store: new MemoryStore() }).checkPolicy({ ...policy, onArgumentsMismatch: 'x' as never }),
    ).toThrow(PolicyError);
  });

  it('keySecret makes keys and fingerprints HMACs: same secret dedupes, another secret or none does not', async () => {
    const store = new MemoryStore();
    const secret = 'a test secret that is at least 32 bytes long';
    const keyed = new Guard({ store, tenant: 'acme', keySecret: secret });
    const sameSecret = new Guard({ store, tenant: 'acme', keySecret: Buffer.from(secret) });
    const plain = new Guard({ store, tenant: 'acme' });
    const policy = { kind: Idempotency.EFFECTFUL, key: 'call' as const };
    const keys: string[] = [];
    const body = () => {
      keys.push(currentToolCall()!.idempotencyKey);
      return 'ran';
    };
    const pin = call({ pin: '4711' }, policy, { callId: 'c-1' });
    expect(await keyed.run(pin, body)).toBe('ran');
    expect(await sameSecret.run(pin, () => 'must not run')).toBe('ran');
    expect(await plain.run(pin, body)).toBe('ran');
    expect(keys).toHaveLength(2);
    expect(keys[0]).not.toBe(keys[1]);
    const record = await store.get({ tenant: 'acme', key: keys[0] as string });
    // The stored fingerprint is not the plain SHA-256 of the arguments (which a PIN guess would match).
    const plainRecord = await store.get({ tenant: 'acme', key: keys[1] as string });
    expect(record?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(record?.fingerprint).not.toBe(plainRecord?.fingerprint);
  });

  it('the guard keeps its own copy of a keySecret: bytes changed later do not change the keys', async () => {
    const secret = new Uint8Array(32).fill(7);
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme', keySecret: secret });
    let runs = 0;
    expect(await guard.run(call({ orderId: 'A' }), () => ++runs)).toBe(1);
    secret[0] = 8;
    expect(await guard.run(call({ orderId: 'A' }), () => ++runs)).toBe(1);
    expect(runs).toBe(1);
  });

  it('a key argument that is a symbol or a function is refused, never merged with others', async () => {
    const { guard } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] };
    for (const orderId of [Symbol('x'), Symbol('y'), () => 1]) {
      const error = await rejection(guard.run(call({ orderId }, policy), () => 'must not run'));
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ argument: 'orderId' });
    }
  });

  it('a keySecret shorter than 32 bytes, or given as undefined, is refused when the guard is made', () => {
    for (const keySecret of ['short', new Uint8Array(31), undefined, '']) {
      expect(() => new Guard({ store: new MemoryStore(), keySecret: keySecret as never })).toThrow(
        PolicyError,
      );
    }
  });

  it('an argument that cannot be read under key: "call" is a KeyDerivationError with the cause', async () => {
    const { guard } = setup();
    const args = Object.defineProperty({}, 'pin', {
      enumerable: true,
      get() {
        throw new RangeError('no reading');
      },
    });
    const error = await rejection(
      guard.run(
        call(args, { kind: Idempotency.EFFECTFUL, key: 'call' }, { callId: 'c-9' }),
        () => 'must not run',
      ),
    );
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    expect((error as Error).cause).toBeDefined();
  });

  it('guard.run for the same key from inside its own body fails at once instead of waiting for itself', async () => {
    const { guard } = setup();
    const error = await rejection(
      guard.run(call({ a: 1 }, idempotent), () => guard.run(call({ a: 1 }, idempotent), () => 'inner')),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/wait for itself/);
  });

  it('arguments outside keyArguments need not be hashable', async () => {
    const { guard } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] };
    expect(await guard.run(call({ orderId: 'A', blob: new Map(), big: 10n }, policy), () => 'ok')).toBe('ok');
    const getterError = await rejection(
      guard.run(
        call(
          Object.defineProperty({}, 'orderId', {
            enumerable: true,
            get() {
              throw new RangeError('boom');
            },
          }),
          policy,
        ),
        () => 'never',
      ),
    );
    expect(KeyDerivationError.isInstance(getterError)).toBe(true);
  });
});
