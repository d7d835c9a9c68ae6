import { describe, expect, it } from 'vitest';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { MAX_RETENTION_MS } from '../store/store-input.js';
import { currentToolCall } from './call-context.js';
import { Guard } from './guard.js';
import { call, effectful, idempotent, rejection, setup, sleep } from './guard.test-support.js';

describe('Guard under hostile input and failures', () => {
  it('a caller cancelled while its claim is in flight: the body never runs and nothing is held', async () => {
    const store = new MemoryStore();
    const claim = store.claim.bind(store);
    store.claim = async (ref, options) => {
      await sleep(50);
      return claim(ref, options);
    };
    const guard = new Guard({ store, tenant: 'acme' });
    const controller = new AbortController();
    let executions = 0;
    const pending = guard.run(call({ a: 1 }, effectful, { signal: controller.signal }), () => ++executions);
    setTimeout(() => controller.abort(new Error('user cancelled')), 10);
    expect(await rejection(pending)).toMatchObject({ message: 'user cancelled' });
    expect(executions).toBe(0);
    expect(store.size).toBe(0);
    expect(await guard.run(call({ a: 1 }), () => 'ran')).toBe('ran');
  });

  it('the lease is renewed while a slow store records the outcome: no takeover, one execution', async () => {
    const store = new MemoryStore();
    const complete = store.complete.bind(store);
    store.complete = async (...args) => {
      await sleep(400);
      return complete(...args);
    };
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 150, heartbeatMs: 40, waitTimeoutMs: 3000 };
    const a = new Guard({ store, tenant: 'acme' });
    const b = new Guard({ store, tenant: 'acme' });
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(50);
      return `v${executions}`;
    };
    const first = a.run(call({ a: 1 }, policy), body);
    await sleep(120);
    const second = b.run(call({ a: 1 }, policy), body);
    expect(await Promise.all([first, second])).toEqual(['v1', 'v1']);
    expect(executions).toBe(1);
  });

  it('a body that throws something unprintable still releases (IDEMPOTENT) or marks (EFFECTFUL)', async () => {
    const { guard, store } = setup();
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const nasty: unknown[] = [
      Object.create(null),
      {
        toString() {
          throw new Error('no');
        },
      },
      Object.defineProperty(new Error('x'), 'message', {
        get() {
          throw new Error('no');
        },
      }),
      revoked.proxy,
    ];
    for (const [i, thrown] of nasty.entries()) {
      // Boxed: resolving a promise with a revoked proxy would itself throw (its `then` is read).
      const boxed: unknown[] = [];
      await guard
        .run(call({ i }, idempotent), () => Promise.reject(thrown))
        .catch((e: unknown) => boxed.push(e));
      expect(boxed.length === 1 && boxed[0] === thrown).toBe(true);
      const eff = await rejection(guard.run(call({ i }), () => Promise.reject(thrown)));
      expect(IndeterminateOutcomeError.isInstance(eff)).toBe(true);
    }
    // Every IDEMPOTENT claim was released; every EFFECTFUL one is indeterminate, none in progress.
    expect((store as MemoryStore).size).toBe(nasty.length);
  });

  it('an EFFECTFUL body cancelled by a lost lease, with the store then down, is indeterminate', async () => {
    const store = new MemoryStore();
    const guard = new Guard({ store, tenant: 'acme' });
    const policy = { kind: Idempotency.EFFECTFUL, leaseMs: 150, heartbeatMs: 50 };
    const error = await rejection(
      guard.run(call({ a: 1 }, policy), async () => {
        const { signal } = currentToolCall()!;
        const fail = async () => {
          throw new Error('ECONNREFUSED');
        };
        store.renew = fail;
        store.claim = fail;
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      }),
    );
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
  });

  it('an async event listener that rejects does not crash the process', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      const guard = new Guard({
        store: new MemoryStore(),
        onEvent: async () => {
          throw new Error('listener bug');
        },
      });
      expect(await guard.run(call({ a: 1 }), () => 42)).toBe(42);
      await sleep(20);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });

  it('timer durations Node cannot honour are refused as policy errors', async () => {
    const { guard } = setup();
    for (const field of ['leaseMs', 'timeoutMs', 'waitTimeoutMs']) {
      const error = await rejection(
        guard.run(call({ a: 1 }, { kind: Idempotency.EFFECTFUL, [field]: 2 ** 31 }), () => 1),
      );
      expect(error).toMatchObject({ code: 'INVALID_POLICY', field });
    }
    // Retention is no timer, but bounded (10 years) so every store decodes the deadline it wrote.
    const retention = await rejection(
      guard.run(
        call({ a: 2 }, { kind: Idempotency.EFFECTFUL, retentionMs: Number.MAX_SAFE_INTEGER }),
        () => 1,
      ),
    );
    expect(retention).toMatchObject({ code: 'INVALID_POLICY', field: 'retentionMs' });
    expect(
      await guard.run(
        call({ a: 3 }, { kind: Idempotency.EFFECTFUL, retentionMs: MAX_RETENTION_MS }),
        () => 'ok',
      ),
    ).toBe('ok');
  });

  it('guard.resolve refuses a resolution that is neither { outcome } nor { released: true }', async () => {
    const { guard } = setup();
    for (const bad of [{}, { released: 'true' }, { released: false }, { released: true, outcome: 1 }, null]) {
      await expect(guard.resolve('k', bad as never)).rejects.toThrow(TypeError);
    }
  });

  it('an error message with NUL is recorded safely (PostgreSQL text cannot hold NUL)', async () => {
    const { guard, store } = setup({ describeError: (error) => ({ message: (error as Error).message }) });
    const error = (await rejection(
      guard.run(call({ a: 1 }), () => Promise.reject(new Error('bad\u0000byte'))),
    )) as IndeterminateOutcomeError;
    expect(await store.get({ tenant: 'acme', key: error.key })).toMatchObject({
      state: 'indeterminate',
      error: { type: 'Error', message: 'bad\\0byte' },
    });
  });

  it('a tenant that is empty or holds NUL is refused', async () => {
    expect(() => new Guard({ store: new MemoryStore(), tenant: '' })).toThrow(TypeError);
    const { guard } = setup();
    const error = await rejection(guard.run(call({ a: 1 }, effectful, { tenant: 'a\u0000b' }), () => 1));
    expect(KeyDerivationError.isInstance(error)).toBe(true);
  });

  it('a tool name or tenant no store can take is a KeyDerivationError before anything is claimed', async () => {
    const { guard, store } = setup();
    const names = ['', 'x'.repeat(257), 'a\u0000b', 'lone \uD800 surrogate'];
    for (const tool of names) {
      const error = await rejection(guard.run({ ...call({ a: 1 }), tool }, () => 'must not run'));
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('tool name');
    }
    for (const tenant of names) {
      const error = await rejection(guard.run(call({ a: 1 }, effectful, { tenant }), () => 'must not run'));
      expect(KeyDerivationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toContain('tenant');
    }
    // A 256-character tenant is the longest accepted, and works end to end.
    const longest = 't'.repeat(256);
    expect(await guard.run(call({ a: 1 }, effectful, { tenant: longest }), () => 'ok')).toBe('ok');
    expect(await store.forget({ tenant: 'acme' })).toBe(0);
  });

  it('guard.resolve with an outcome the codec cannot encode is an OutcomeEncodingError and changes nothing', async () => {
    const { guard, store } = setup();
    const error = (await rejection(
      guard.run(call({ a: 1 }), () => Promise.reject(new Error('gateway timeout'))),
    )) as IndeterminateOutcomeError;
    const failed = await rejection(guard.resolve(error.key, { outcome: 10n }));
    expect(OutcomeEncodingError.isInstance(failed)).toBe(true);
    expect(failed).toMatchObject({ direction: 'encode', code: 'OUTCOME_ENCODING_FAILED' });
    expect((failed as Error).cause).toBeInstanceOf(TypeError);
    expect(await store.get({ tenant: 'acme', key: error.key })).toMatchObject({ state: 'indeterminate' });
  });

  it('a recorded outcome the codec cannot decode is an OutcomeEncodingError, not a raw SyntaxError', async () => {
    const { store } = setup();
    const writer = new Guard({
      store,
      tenant: 'acme',
      codec: { encode: () => 'not json', decode: (t) => t },
    });
    expect(await writer.run(call({ a: 1 }), () => 'x')).toBe('x');
    const reader = new Guard({ store, tenant: 'acme' });
    const failed = await rejection(reader.run(call({ a: 1 }), () => 'must not run'));
    expect(OutcomeEncodingError.isInstance(failed)).toBe(true);
    expect(failed).toMatchObject({ direction: 'decode', tool: 'refund' });
    expect((failed as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it('a claim whose reply came late (0.8 of the lease) renews at once instead of a heartbeat later', async () => {
    const store = new MemoryStore();
    const renewedAtMs: number[] = [];
    let bodyStartedAtMs = 0;
    const lateReplies = new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'claim') {
          return async (...claimArgs: Parameters<IdempotencyStore['claim']>) => {
            const result = await target.claim(...claimArgs);
            await sleep(800);
            return result;
          };
        }
        if (property === 'renew') {
          return (...renewArgs: Parameters<IdempotencyStore['renew']>) => {
            renewedAtMs.push(performance.now());
            return target.renew(...renewArgs);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const guard = new Guard({ store: lateReplies, tenant: 'acme' });
    const policy = { kind: Idempotency.EFFECTFUL, leaseMs: 1000, heartbeatMs: 300 };
    expect(
      await guard.run(call({ a: 1 }, policy), async () => {
        bodyStartedAtMs = performance.now();
        await sleep(150);
        return 'ok';
      }),
    ).toBe('ok');
    // 200 ms of lease were left: less than the usual slack (700 ms), so the renewal is at once.
    expect(renewedAtMs.length).toBeGreaterThanOrEqual(1);
    expect((renewedAtMs[0] as number) - bodyStartedAtMs).toBeLessThan(100);
  });
});
