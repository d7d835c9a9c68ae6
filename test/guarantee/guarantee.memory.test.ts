// The guarantee scenarios (test/guarantee/scenarios.ts) on MemoryStore, plus the cases that need
// the worker's own clocks: a wall-clock step must not stretch a wait or hide a lost lease.
import {
  currentToolCall,
  Guard,
  Idempotency,
  MemoryStore,
  OutcomePendingError,
  StoreUnavailableError,
} from '@toolfence/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeGuarantee, sleep } from './scenarios.js';

const store = new MemoryStore();
describeGuarantee('MemoryStore', () => store, 'memory');

describe('the worker measures durations on the monotonic clock (a wall-clock step changes nothing)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const stepBackAnHour = () => {
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() - 3_600_000);
  };

  it('a waiter with waitTimeoutMs 1000 gives up after ~1 s although the wall clock stepped back an hour', async () => {
    const memory = new MemoryStore();
    const guard = new Guard({ store: memory, tenant: 'clock' });
    const policy = { kind: Idempotency.EFFECTFUL, waitTimeoutMs: 1000 };
    const call = { tool: 'refund', arguments: { orderId: 'A' }, runId: 'r', policy };
    let holding = false;
    const holder = guard.run(call, () => {
      holding = true;
      return sleep(1800).then(() => 'done');
    });
    // The body runs once the holder's claim is answered: only then is the key busy for `other`.
    while (!holding) await sleep(5);
    const other = new Guard({ store: memory, tenant: 'clock' });
    const started = performance.now();
    const waiting = other.run(call, () => 'must not run').catch((error: unknown) => error);
    await sleep(100);
    stepBackAnHour();
    const error = await waiting;
    expect(OutcomePendingError.isInstance(error)).toBe(true);
    expect(performance.now() - started).toBeLessThan(2500);
    vi.restoreAllMocks();
    expect(await holder).toBe('done');
  });

  it('renewals that fail while the wall clock steps back still abort the body at the lease', async () => {
    const memory = new MemoryStore();
    const failingRenewals = new Proxy(memory, {
      get(target, property, receiver) {
        if (property === 'renew') {
          return async () => {
            throw new StoreUnavailableError('renew', 'connection refused');
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const guard = new Guard({ store: failingRenewals, tenant: 'clock' });
    const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 600, heartbeatMs: 150, waitTimeoutMs: 200 };
    let abortedAfterMs: number | undefined;
    const started = performance.now();
    const running = guard
      .run({ tool: 'sync', arguments: { id: 1 }, runId: 'r', policy }, async () => {
        const { signal } = currentToolCall()!;
        signal.addEventListener('abort', () => {
          abortedAfterMs = performance.now() - started;
        });
        await sleep(100);
        stepBackAnHour();
        await sleep(2900);
        return 'too late';
      })
      .catch((error: unknown) => error);
    await sleep(1500);
    expect(abortedAfterMs).toBeDefined();
    expect(abortedAfterMs as number).toBeLessThan(1200);
    vi.restoreAllMocks();
    await running;
  });
});
