import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { MemoryStore } from '../memory/memory-store.js';
import { Guard } from './guard.js';
import { call, rejection } from './guard.test-support.js';
import type { GuardEvent } from './guard-events.js';

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
