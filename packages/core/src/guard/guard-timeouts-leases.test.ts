import { describe, expect, it } from 'vitest';
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolTimeoutError } from '../errors/tool-timeout-error.js';
import type { MemoryStore } from '../memory/memory-store.js';
import { Idempotency } from '../policy/idempotency-policy.js';
import { currentToolCall } from './call-context.js';
import { Guard } from './guard.js';
import { call, rejection, setup, sleep } from './guard.test-support.js';
import type { GuardEvent } from './guard-events.js';

describe('Guard', () => {
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
    // Issue 27, item 2: answered before the body settled is `interrupted`, not a record to decide.
    expect(types()).toEqual(['tool.started', 'tool.interrupted', 'tool.completed', 'tool.deduplicated']);
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
});
