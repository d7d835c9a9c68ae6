// Field case C07 (docs/field-cases.md, C07), written once and run against every
// store: a lease shorter than the work, and a holder that wakes up late.
import {
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyStore,
  LeaseLostError,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const policy = { kind: Idempotency.IDEMPOTENT, leaseMs: 1000, heartbeatMs: 300, waitTimeoutMs: 6000 };

/** A view of `store` whose renewals hang while `frozen()` (a GC pause or a frozen VM). */
export function freezable(store: IdempotencyStore, frozen: () => boolean): IdempotencyStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'renew') {
        return async (...renewArgs: Parameters<IdempotencyStore['renew']>) => {
          while (frozen()) await sleep(20);
          return target.renew(...renewArgs);
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Register the C07 tests. `storeOf` gives the store of each test (the same shared one, or a new
 * one each time); `runId` keeps runs of the same store apart.
 */
export function describeC07(storeName: string, storeOf: () => IdempotencyStore, runId: string): void {
  describe(`C07 on ${storeName}: a lease shorter than the work, and a holder that wakes up late`, () => {
    it('a 3 s body under a 1 s lease renewed every 300 ms runs once; nobody takes over', async () => {
      const store = storeOf();
      const events: GuardEvent[] = [];
      const guard = new Guard({ store, tenant: 't', onEvent: (e) => events.push(e) });
      let executions = 0;
      const body = async () => {
        executions += 1;
        await sleep(3000);
        return 'report ready';
      };
      const call = { tool: 'build_report', arguments: { id: 7 }, runId, policy };
      const a = guard.run(call, body);
      await sleep(1500);
      const b = guard.run(call, body);
      expect(await Promise.all([a, b])).toEqual(['report ready', 'report ready']);
      expect(executions).toBe(1);
      expect(events.map((e) => e.type)).toEqual([
        'tool.started',
        'tool.waiting',
        'tool.completed',
        'tool.deduplicated',
      ]);
      const record = await store.get({ tenant: 't', key: events[0]!.key });
      expect(record).toMatchObject({ state: 'completed', fence: 1, attempt: 1, outcome: '"report ready"' });
    });

    it("A stalls 2 s: B takes over with token 2, A's late result with token 1 is rejected as stale", async () => {
      const store = storeOf();
      let frozenUntil = 0;
      const events: GuardEvent[] = [];
      const onEvent = (e: GuardEvent) => events.push(e);
      const guardA = new Guard({
        store: freezable(store, () => Date.now() < frozenUntil),
        tenant: 't',
        onEvent,
      });
      const guardB = new Guard({ store, tenant: 't', onEvent });
      const call = { tool: 'sync_inventory', arguments: { sku: 'X-1' }, runId, policy };

      let aSignalReason: unknown;
      let aFence = 0;
      const a = guardA.run(call, async () => {
        const context = currentToolCall()!;
        aFence = context.fence;
        context.signal.addEventListener('abort', () => {
          aSignalReason = context.signal.reason;
        });
        frozenUntil = Date.now() + 2000;
        await sleep(2500); // wakes after the pause and finishes anyway
        return { writtenBy: 'A', fence: context.fence };
      });

      // From when A's body runs (its claim may answer late on a loaded machine): past A's lease.
      while (aFence === 0) await sleep(5);
      await sleep(1300);
      let bFence = 0;
      const b = await guardB.run(call, async () => {
        bFence = currentToolCall()!.fence;
        return { writtenBy: 'B', fence: bFence };
      });

      expect(aFence).toBe(1);
      expect(bFence).toBe(2);
      expect(b).toEqual({ writtenBy: 'B', fence: 2 });
      // A's caller gets the winning attempt's result, not its own stale one.
      expect(await a).toEqual({ writtenBy: 'B', fence: 2 });
      expect(LeaseLostError.isInstance(aSignalReason)).toBe(true);
      const key = events[0]!.key;
      expect(await store.get({ tenant: 't', key })).toMatchObject({
        state: 'completed',
        fence: 2,
        outcome: JSON.stringify({ writtenBy: 'B', fence: 2 }),
      });
      const types = events.map((e) => `${e.type}@${e.fence}`);
      expect(types).toContain('tool.fenced@1');
      expect(types).toContain('tool.started@2');
      expect(types).toContain('tool.completed@2');
      expect(types).toContain('tool.stale_result@1');
      expect(types).not.toContain('tool.completed@1');
    });
  });
}
