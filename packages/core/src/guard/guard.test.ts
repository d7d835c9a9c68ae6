import { describe, expect, it } from 'vitest';
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolTimeoutError } from '../errors/tool-timeout-error.js';
import { Idempotency, type IdempotencyPolicy } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { MAX_RETENTION_MS } from '../store/store-input.js';
import { currentToolCall } from './call-context.js';
import { Guard } from './guard.js';
import type { GuardEvent } from './guard-events.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const effectful: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL };
const idempotent: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };

function setup(options: { store?: IdempotencyStore } = {}) {
  const store = options.store ?? new MemoryStore();
  const events: GuardEvent[] = [];
  const guard = new Guard({ store, tenant: 'acme', onEvent: (event) => events.push(event) });
  const types = () => events.map((event) => event.type);
  return { store, guard, events, types };
}

const call = (args: Record<string, unknown>, policy: IdempotencyPolicy = effectful, extra = {}) => ({
  tool: 'refund',
  arguments: args,
  runId: 'run-1',
  policy,
  ...extra,
});

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => new Error('expected a rejection'),
    (error: unknown) => error,
  );
}

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
      error: { type: 'ECONNRESET', message: 'socket hang up' },
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

  it('EFFECTFUL timeout: the caller gets IndeterminateOutcomeError at the deadline; a late result is recorded', async () => {
    const { guard, store, types } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, timeoutMs: 100 };
    let aborted: unknown;
    const started = Date.now();
    const error = await rejection(
      guard.run(call({ a: 1 }, policy), async () => {
        const { signal } = currentToolCall()!;
        signal.addEventListener('abort', () => {
          aborted = signal.reason;
        });
        await sleep(400); // ignores its signal, settles late
        return 'late but true';
      }),
    );
    expect(Date.now() - started).toBeLessThan(350);
    expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ reasonType: 'ToolTimeoutError' });
    expect(ToolTimeoutError.isInstance(aborted)).toBe(true);
    await sleep(450);
    const key = (error as IndeterminateOutcomeError).key;
    expect(await store.get({ tenant: 'acme', key })).toMatchObject({
      state: 'completed',
      outcome: '"late but true"',
    });
    expect(await guard.run(call({ a: 1 }, policy), () => 'must not run')).toBe('late but true');
    expect(types()).toEqual(['tool.started', 'tool.indeterminate', 'tool.completed', 'tool.deduplicated']);
  });

  it('IDEMPOTENT timeout: the caller gets ToolTimeoutError at once; the claim is held until the body settles', async () => {
    const { guard, types } = setup();
    const policy = { kind: Idempotency.IDEMPOTENT, timeoutMs: 50 };
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(300); // ignores its signal
      return 'late but recorded';
    };
    const started = Date.now();
    const error = await rejection(guard.run(call({ a: 1 }, policy), body));
    expect(ToolTimeoutError.isInstance(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(250);
    // A retry does not run beside the still-running body: it waits for it and gets its result.
    expect(await guard.run(call({ a: 1 }, policy), body)).toBe('late but recorded');
    expect(executions).toBe(1);
    expect(types()).toEqual([
      'tool.started',
      'tool.failed',
      'tool.waiting',
      'tool.completed',
      'tool.deduplicated',
    ]);

    const failing = { kind: Idempotency.IDEMPOTENT, timeoutMs: 30 };
    const late = async () => {
      executions += 1;
      await sleep(100);
      throw new Error('late failure');
    };
    expect(ToolTimeoutError.isInstance(await rejection(guard.run(call({ b: 1 }, failing), late)))).toBe(true);
    await sleep(150);
    // The late failure released the claim: the next call runs.
    expect(await guard.run(call({ b: 1 }, failing), () => 'ran again')).toBe('ran again');
  });

  it('a waiter past waitTimeoutMs is told the outcome is pending, not failed', async () => {
    const { guard } = setup();
    const policy = { kind: Idempotency.EFFECTFUL, waitTimeoutMs: 100 };
    const holder = guard.run(call({ a: 1 }, policy), async () => {
      await sleep(400);
      return 'done';
    });
    await sleep(10);
    const error = await rejection(guard.run(call({ a: 1 }, policy), () => 'must not run'));
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect((error as OutcomePendingError).waitedMs).toBeGreaterThanOrEqual(95);
    expect(await holder).toBe('done');
    expect(await guard.run(call({ a: 1 }, policy), () => 'must not run')).toBe('done');
  });

  it('renews the lease on a heartbeat while a body outlives its lease (nobody takes over)', async () => {
    const { guard, types } = setup();
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 400, heartbeatMs: 80 };
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(1500);
      return 'one';
    };
    const first = guard.run(call({ a: 1 }, policy), body);
    await sleep(800);
    const second = guard.run(call({ a: 1 }, policy), body);
    expect(await Promise.all([first, second])).toEqual(['one', 'one']);
    expect(executions).toBe(1);
    expect(types()).not.toContain('tool.fenced');
  });

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

  it('IDEMPOTENT: a lost attempt is re-run with a higher fence up to maxAttempts, then abandoned', async () => {
    const { guard, store } = setup();
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 100, heartbeatMs: 30, maxAttempts: 2 };
    const tenant = 'acme';
    // Simulate holders that died: claim directly in the store and never finish.
    const key = (await rejection(
      guard.run(call({ a: 1 }, { ...policy, timeoutMs: 1 }), () => sleep(50)),
    )) as ToolTimeoutError;
    expect(ToolTimeoutError.isInstance(key)).toBe(true);
    const events: GuardEvent[] = [];
    const g2 = new Guard({ store, tenant, onEvent: (e) => events.push(e) });
    const claimDirect = async () => {
      const k = (await import('../key/idempotency-key.js')).idempotencyKey({
        tenant,
        runId: 'run-1',
        tool: 'refund',
        arguments: { a: 2 },
      });
      return store.claim(
        { tenant, key: k },
        {
          tool: 'refund',
          fingerprint: k,
          owner: 'dead-worker',
          leaseMs: 100,
          retentionMs: 86_400_000,
          mode: 'at-least-once',
          maxAttempts: 2,
          checkFingerprint: false,
        },
      );
    };
    expect((await claimDirect()).status).toBe('acquired');
    await sleep(150);
    const seen: number[] = [];
    const result = await g2.run(call({ a: 2 }, policy), () => {
      seen.push(currentToolCall()!.fence);
      return 'ran on attempt 2';
    });
    expect(result).toBe('ran on attempt 2');
    expect(seen).toEqual([2]);
    expect(events[0]).toMatchObject({ type: 'tool.started', attempt: 2, fence: 2, takeover: true });

    const abandonedPolicy = { ...policy, maxAttempts: 1 };
    const k3 = (await import('../key/idempotency-key.js')).idempotencyKey({
      tenant,
      runId: 'run-1',
      tool: 'refund',
      arguments: { a: 3 },
    });
    await store.claim(
      { tenant, key: k3 },
      {
        tool: 'refund',
        fingerprint: k3,
        owner: 'dead',
        leaseMs: 100,
        retentionMs: 86_400_000,
        mode: 'at-least-once',
        maxAttempts: 1,
        checkFingerprint: false,
      },
    );
    const error = await rejection(g2.run(call({ a: 3 }, abandonedPolicy), () => 'never'));
    expect(ExecutionAbandonedError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ attempt: 1, fence: 1 });
    expect(events.at(-1)?.type).toBe('tool.abandoned');
  });

  it('a body that fails before it starts leaves no claim behind', async () => {
    const { guard, store } = setup();
    // A listener that throws on tool.started must not strand the claim either.
    const g = new Guard({
      store,
      onEvent: (event) => {
        if (event.type === 'tool.started') throw new Error('listener bug');
      },
    });
    expect(await g.run(call({ a: 1 }), () => 'fine')).toBe('fine');
    expect((store as MemoryStore).size).toBe(1);
    const notAFunction = await rejection(guard.run(call({ b: 1 }), 42 as never));
    expect(notAFunction).toBeInstanceOf(TypeError);
    expect((store as MemoryStore).size).toBe(1);
    const keyError = await rejection(guard.run(call({ b: 1n }), () => 'never'));
    expect(KeyDerivationError.isInstance(keyError)).toBe(true);
    expect((store as MemoryStore).size).toBe(1);
  });

  it('lost lease: the body is aborted with LeaseLostError, its late result is stale, the caller gets the winner', async () => {
    const { guard, store, types } = setup();
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 200, heartbeatMs: 60 };
    // Stop A's heartbeat by making its renewals hang (a frozen worker).
    const realRenew = store.renew.bind(store);
    let freeze = false;
    store.renew = (ref, holder, leaseMs) =>
      freeze ? new Promise(() => {}) : realRenew(ref, holder, leaseMs);
    let abortReason: unknown;
    const a = guard.run(call({ a: 1 }, policy), async () => {
      const { signal } = currentToolCall()!;
      signal.addEventListener('abort', () => {
        abortReason = signal.reason;
      });
      freeze = true;
      await sleep(500);
      return 'A';
    });
    await sleep(300);
    freeze = false;
    const b = await guard.run(call({ a: 1 }, policy), () => {
      expect(currentToolCall()!.fence).toBe(2);
      return 'B';
    });
    expect(b).toBe('B');
    expect(await a).toBe('B');
    expect(LeaseLostError.isInstance(abortReason)).toBe(true);
    expect(types()).toContain('tool.stale_result');
    expect(types()).toContain('tool.fenced');
  });

  it('a value answered unrecorded because the store could not be asked again is told as tool.completed recorded: false', async () => {
    // A's lease is lost mid-body (its renewals hang), B takes over (fence 2) and still runs when
    // A returns: A's complete is stale, and the store then cannot be reached for A's next claim.
    // RULES G1: A answers its own value; listeners must hear that it is unrecorded.
    const { store } = setup();
    const events: GuardEvent[] = [];
    const g = new Guard({ store, tenant: 'acme', onEvent: (event) => events.push(event) });
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 200, heartbeatMs: 60 };
    const realRenew = store.renew.bind(store);
    const realClaim = store.claim.bind(store);
    let freeze = false;
    let unreachable = false;
    store.renew = (ref, holder, leaseMs) =>
      freeze ? new Promise(() => {}) : realRenew(ref, holder, leaseMs);
    store.claim = (ref, options) =>
      unreachable ? Promise.reject(new StoreUnavailableError('claim', 'frozen')) : realClaim(ref, options);
    const a = g.run(call({ a: 1 }, policy), async () => {
      freeze = true;
      await sleep(500);
      unreachable = true;
      return 'A';
    });
    await sleep(300);
    freeze = false;
    const b = g.run(call({ a: 1 }, policy), async () => {
      await sleep(600);
      return 'B';
    });
    expect(await a).toBe('A');
    unreachable = false;
    expect(await b).toBe('B');
    const ofA = events.filter((event) => event.fence === 1).map((event) => [event.type, event.recorded]);
    expect(ofA).toContainEqual(['tool.stale_result', undefined]);
    expect(ofA.at(-1)).toEqual(['tool.completed', false]);
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

describe('Guard and lost store replies', () => {
  it('a claim applied in the store but whose reply was lost is re-asked with the same owner and runs once', async () => {
    const store = new MemoryStore();
    const realClaim = store.claim.bind(store);
    let dropped = false;
    store.claim = async (ref, options) => {
      const result = await realClaim(ref, options);
      if (!dropped) {
        dropped = true;
        throw new Error('ECONNRESET: reply lost after the claim was applied');
      }
      return result;
    };
    const events: GuardEvent[] = [];
    const guard = new Guard({ store, tenant: 'acme', onEvent: (e) => events.push(e) });
    let executions = 0;
    expect(await guard.run(call({ orderId: 'A-1' }), () => ++executions)).toBe(1);
    expect(executions).toBe(1);
    expect(events.map((e) => e.type)).toEqual(['tool.started', 'tool.completed']);
  });

  it('a complete applied in the store but whose reply was lost is reported completed, not stale', async () => {
    const store = new MemoryStore();
    const realComplete = store.complete.bind(store);
    let dropped = false;
    store.complete = async (ref, holder, outcome, retentionMs) => {
      const result = await realComplete(ref, holder, outcome, retentionMs);
      if (!dropped) {
        dropped = true;
        throw new Error('ECONNRESET: reply lost after the complete was applied');
      }
      return result;
    };
    const events: GuardEvent[] = [];
    const guard = new Guard({ store, tenant: 'acme', onEvent: (e) => events.push(e) });
    expect(await guard.run(call({ orderId: 'A-2' }), () => 'refunded')).toBe('refunded');
    expect(events.map((e) => e.type)).toEqual(['tool.started', 'tool.completed']);
    expect(events[1]).toMatchObject({ recorded: true });
  });

  it('a store that stays down fails the claim after one retry with StoreUnavailableError', async () => {
    const store = new MemoryStore();
    let attempts = 0;
    store.claim = async () => {
      attempts += 1;
      throw new Error('ECONNREFUSED');
    };
    const guard = new Guard({ store });
    const error = await rejection(guard.run(call({ a: 1 }), () => 'never'));
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect(attempts).toBe(2);
  });
});

describe('Guard: identical calls in flight in one process', () => {
  function countingStore() {
    const store = new MemoryStore();
    const counts = { claim: 0, waitForSettle: 0 };
    const claim = store.claim.bind(store);
    const wait = store.waitForSettle.bind(store);
    store.claim = (ref, options) => {
      counts.claim += 1;
      return claim(ref, options);
    };
    store.waitForSettle = (ref, options) => {
      counts.waitForSettle += 1;
      return wait(ref, options);
    };
    return { store, counts };
  }

  it('1,000 identical calls cost the store one claim; each caller gets its own copy of the result', async () => {
    const { store, counts } = countingStore();
    const guard = new Guard({ store, tenant: 'acme' });
    let executions = 0;
    const results = await Promise.all(
      Array.from({ length: 1000 }, () =>
        guard.run(call({ orderId: 'A-1' }), async () => {
          executions += 1;
          await sleep(20);
          return { refundId: 'r-1' };
        }),
      ),
    );
    expect(executions).toBe(1);
    expect(counts).toEqual({ claim: 1, waitForSettle: 0 });
    expect(results[1]).toEqual({ refundId: 'r-1' });
    expect(results[1]).not.toBe(results[2]);
  });

  it('when the leader fails an IDEMPOTENT call, a follower asks the store and runs it (as without coalescing)', async () => {
    const { store } = countingStore();
    const guard = new Guard({ store, tenant: 'acme' });
    let executions = 0;
    const body = async () => {
      executions += 1;
      await sleep(20);
      if (executions === 1) throw new Error('flaky');
      return `ran ${executions}`;
    };
    const [first, second] = await Promise.allSettled([
      guard.run(call({ id: 1 }, idempotent), body),
      guard.run(call({ id: 1 }, idempotent), body),
    ]);
    expect(first).toMatchObject({ status: 'rejected', reason: { message: 'flaky' } });
    expect(second).toEqual({ status: 'fulfilled', value: 'ran 2' });
  });

  it('a follower is bounded by its own waitTimeoutMs and told the outcome is pending', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const slow = guard.run(call({ a: 1 }), () => sleep(300).then(() => 'done'));
    const error = await rejection(
      guard.run(call({ a: 1 }, { ...effectful, waitTimeoutMs: 50 }), () => 'never'),
    );
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect(await slow).toBe('done');
  });

  it('different arguments under a business key are not coalesced: the conflict is still reported', async () => {
    const guard = new Guard({ store: new MemoryStore(), tenant: 'acme' });
    const policy = {
      kind: Idempotency.EFFECTFUL,
      key: (args: Record<string, unknown>) => String(args.orderId),
    };
    const first = guard.run(call({ orderId: 'A', amount: 1 }, policy), () => sleep(50).then(() => 'one'));
    const error = await rejection(guard.run(call({ orderId: 'A', amount: 2 }, policy), () => 'two'));
    expect(IdempotencyConflictError.isInstance(error)).toBe(true);
    expect(await first).toBe('one');
  });
});

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
    const { guard, store } = setup();
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
