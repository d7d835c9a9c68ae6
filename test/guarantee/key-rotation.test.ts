// Issue 27, item 10: rotating the key secret must not re-run an unsettled call. A guard given
// `keySecret: [current, previous]` claims under the current secret and, for a claim that starts a
// fresh record, looks the call up under the previous one: a record there is answered through the
// store's own claim (replayed, stopped, waited for), never run a second time. On MemoryStore,
// Redis and PostgreSQL.
import {
  Guard,
  type GuardedCall,
  Idempotency,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  idempotencyKey,
  PolicyError,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { type StoreKind, storeForFile, storeNames, uniqueName } from '../support/stores.js';
import { waitFor } from '../support/wait-for.js';

const OLD = 'old-secret-0123456789abcdef0123456789abcdef';
const NEW = 'new-secret-0123456789abcdef0123456789abcdef';
const EFFECTFUL = { kind: Idempotency.EFFECTFUL } as const;

function refund(tenant: string, runId: string): GuardedCall {
  return { tool: 'refund', tenant, runId, arguments: { order: runId, amount: 9_000 }, policy: EFFECTFUL };
}

function keyOf(call: GuardedCall, secret: string): string {
  return idempotencyKey({
    tenant: call.tenant as string,
    runId: call.runId,
    tool: call.tool,
    arguments: call.arguments,
    secret,
  });
}

function rotationCases(kind: StoreKind): void {
  describe(storeNames[kind], () => {
    const store = storeForFile(kind, `rotation-${kind}`);
    const guards = (tenant: string) => ({
      old: new Guard({ store: store(), tenant, keySecret: OLD }),
      rotating: new Guard({ store: store(), tenant, keySecret: [NEW, OLD] }),
      // The first deploy of the two-step procedure: still claims under OLD, looks under NEW.
      preparing: new Guard({ store: store(), tenant, keySecret: [OLD, NEW] }),
      newOnly: new Guard({ store: store(), tenant, keySecret: NEW }),
    });

    it('a call left indeterminate under the previous secret stops again, its body not run twice', async () => {
      const tenant = uniqueName('rot-ind');
      const { old, rotating } = guards(tenant);
      const call = refund(tenant, 'run-1');
      let executions = 0;
      const body = async () => {
        executions += 1;
        throw new Error('gateway timeout');
      };
      await expect(old.run(call, body)).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      const stopped = await rotating.run(call, body).then(
        () => expect.unreachable('the retry must stop'),
        (error: unknown) => error,
      );
      expect(executions).toBe(1);
      expect(stopped).toBeInstanceOf(IndeterminateOutcomeError);
      // The operator is sent to the record that needs a decision: the one under the old key.
      expect(stopped).toMatchObject({ key: keyOf(call, OLD), tool: 'refund' });
      // The claim under the new key was given back: nothing is held or stopped there.
      expect(await store().get({ tenant, key: keyOf(call, NEW) })).toBeNull();
      expect(await store().get({ tenant, key: keyOf(call, OLD) })).toMatchObject({ state: 'indeterminate' });

      // Released by an operator ("it did not happen"): the retry runs once, under the new key.
      expect(await rotating.resolve(keyOf(call, OLD), { released: true }, { by: 'ops' })).toEqual({
        status: 'resolved',
      });
      expect(await rotating.run(call, async () => ({ refundId: `r-${++executions}` }))).toEqual({
        refundId: 'r-2',
      });
      expect(await rotating.run(call, async () => ({ refundId: `r-${++executions}` }))).toEqual({
        refundId: 'r-2',
      });
      expect(executions).toBe(2);
      expect(await store().get({ tenant, key: keyOf(call, NEW) })).toMatchObject({ state: 'completed' });
    });

    it('a call completed under the previous secret is replayed', async () => {
      const tenant = uniqueName('rot-done');
      const { old, rotating } = guards(tenant);
      const call = refund(tenant, 'run-1');
      let executions = 0;
      const body = async () => ({ refundId: `r-${++executions}` });
      expect(await old.run(call, body)).toEqual({ refundId: 'r-1' });
      expect(await rotating.run(call, body)).toEqual({ refundId: 'r-1' });
      expect(executions).toBe(1);
      expect(await store().get({ tenant, key: keyOf(call, NEW) })).toBeNull();
    });

    it('a call still running under the previous secret is waited for, then replayed', async () => {
      const tenant = uniqueName('rot-wait');
      const { old, rotating } = guards(tenant);
      const call = refund(tenant, 'run-1');
      let executions = 0;
      let finish: (() => void) | undefined;
      const first = old.run(call, async () => {
        executions += 1;
        await new Promise<void>((resolve) => {
          finish = resolve;
        });
        return { refundId: 'r-1' };
      });
      await waitFor(() => finish !== undefined, Boolean, { message: 'the first body to start' });
      const retry = rotating.run(call, async () => ({ refundId: `r-${++executions}` }));
      await waitFor(
        () => store().get({ tenant, key: keyOf(call, OLD) }),
        (record) => record?.state === 'in_progress',
      );
      finish?.();
      expect(await first).toEqual({ refundId: 'r-1' });
      expect(await retry).toEqual({ refundId: 'r-1' });
      expect(executions).toBe(1);
    });

    it('without the previous secret the same retry runs again (the gap the rotation closes)', async () => {
      const tenant = uniqueName('rot-gap');
      const { old, newOnly } = guards(tenant);
      const call = refund(tenant, 'run-1');
      let executions = 0;
      await expect(
        old.run(call, async () => {
          executions += 1;
          throw new Error('gateway timeout');
        }),
      ).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      await newOnly.run(call, async () => {
        executions += 1;
      });
      expect(executions).toBe(2);
    });

    it('the two-step procedure: guards on [old, new] and [new, old] racing one call run it once', async () => {
      const tenant = uniqueName('rot-race');
      const { preparing, rotating } = guards(tenant);
      const executions = new Map<string, number>();
      const rounds = 24;
      await Promise.all(
        Array.from({ length: rounds }, async (_, round) => {
          const call = refund(tenant, `run-${round}`);
          const body = async () => {
            executions.set(call.runId as string, (executions.get(call.runId as string) ?? 0) + 1);
            await new Promise((resolve) => setTimeout(resolve, 5));
            return { refundId: `r-${round}` };
          };
          const answers = await Promise.all([preparing.run(call, body), rotating.run(call, body)]);
          expect(answers).toEqual([{ refundId: `r-${round}` }, { refundId: `r-${round}` }]);
        }),
      );
      expect([...executions.values()].every((count) => count === 1)).toBe(true);
      expect(executions.size).toBe(rounds);
    }, 60_000);
  });
}

rotationCases('memory');
rotationCases('redis');
rotationCases('postgres');

it('keySecret takes one secret or [current, previous], distinct, each of 32 bytes or more', () => {
  const store = {} as IdempotencyStore;
  const attempt = (keySecret: unknown) => () =>
    new Guard({ store, keySecret: keySecret as [string, string] });
  expect(attempt([NEW, NEW])).toThrow(PolicyError);
  expect(attempt([NEW, NEW])).toThrow('the previous secret is the current one');
  expect(attempt([NEW, 'short'])).toThrow('the previous secret must be at least 32 bytes');
  expect(attempt([NEW, OLD, 'x'.repeat(40)])).toThrow('must be one secret or [current, previous]');
  expect(attempt([NEW, Buffer.from(NEW)])).toThrow('the previous secret is the current one');
  expect(attempt([NEW, OLD])).not.toThrow();
});
