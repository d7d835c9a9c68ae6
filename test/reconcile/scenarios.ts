// Reconcile (docs/reconcile.md), written once and run on every store: an EFFECTFUL call whose
// outcome is unknown asks the policy's probe, and the probe's verdict settles the record as an
// operator's would. Each case counts the effects at the provider: a probe must never make a
// second effect possible (concurrent probers, a verdict that arrives after an operator resolved
// and a new life of the key began, a probe that hangs or throws).
import {
  currentToolCall,
  Guard,
  type GuardEvent,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  KeyDerivationError,
  RECONCILE_TOOL,
  type ReconcileInput,
  type ReconcileVerdict,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';
import { type Charge, gate, Payments, sleep } from './payments.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** The probe every case uses unless it says otherwise: the provider's lookup by key. */
function lookup(payments: Payments) {
  return async ({ idempotencyKey }: ReconcileInput): Promise<ReconcileVerdict> => {
    const charge = await payments.find(idempotencyKey);
    return charge === undefined
      ? { happened: false, detail: 'no charge for this key' }
      : { happened: true, outcome: charge, detail: `found ${charge.chargeId}` };
  };
}

export function describeReconcile(storeName: string, storeOf: () => IdempotencyStore, label: string): void {
  let counter = 0;
  const tenant = () => `rc-${label}-${++counter}-${Math.random().toString(36).slice(2, 8)}`;
  const chargeCall = (t: string, policy: IdempotencyPolicy) => ({
    tool: 'charge',
    arguments: { orderId: 'A-100', amountCents: 3000 },
    runId: 'run-1',
    tenant: t,
    policy,
  });
  /** The body: charge with the call's idempotency key (what lets the probe find the effect). */
  const charging = (payments: Payments, executions: { count: number }) => async (): Promise<Charge> => {
    executions.count++;
    return payments.charge(currentToolCall()!.idempotencyKey, 3000);
  };

  describe(`reconcile on ${storeName}`, () => {
    it('a lost reply: the probe finds the charge, the call returns it, a repeat replays it, the history says reconcile', async () => {
      const t = tenant();
      const payments = new Payments();
      payments.lostReplies = 1;
      const events: GuardEvent[] = [];
      const guard = new Guard({ store: storeOf(), tenant: t, onEvent: (event) => events.push(event) });
      const policy = { kind: Idempotency.EFFECTFUL, reconcile: lookup(payments) };
      const executions = { count: 0 };
      const answer = await guard.run(chargeCall(t, policy), charging(payments, executions));
      expect(answer).toEqual({ chargeId: 'ch_1', amountCents: 3000 });
      expect(await guard.run(chargeCall(t, policy), () => 'must not run')).toEqual(answer);
      expect(executions.count).toBe(1);
      expect(payments.charges).toBe(1);
      const reconciled = events.find((event) => event.type === 'tool.reconciled');
      expect(reconciled?.reconcile).toEqual({
        verdict: 'happened',
        tries: 1,
        applied: 'resolved',
        detail: 'found ch_1',
      });
      const resolved = events.find((event) => event.type === 'tool.resolved');
      expect(resolved?.resolution).toMatchObject({ action: 'completed', by: 'reconcile' });
      const key = reconciled?.key as string;
      const history = await guard.resolutions(key);
      expect(history[0]).toMatchObject({
        action: 'completed',
        fromState: 'indeterminate',
        by: 'reconcile',
        reason: 'probe: happened (try 1 of 3): found ch_1',
      });
      // The probe's lease was released: no record of it is left in progress.
      const inProgress = await storeOf().list?.({ tenant: t, states: ['in_progress'], limit: 10 });
      expect(inProgress?.records ?? []).toEqual([]);
    });

    it('a refusal before the charge: the probe says it did not happen, the key is released, the body runs once more', async () => {
      const t = tenant();
      const payments = new Payments({ dedupe: false });
      payments.refusedBeforeApplying = 1;
      const guard = new Guard({ store: storeOf(), tenant: t });
      const policy = { kind: Idempotency.EFFECTFUL, reconcile: lookup(payments) };
      const executions = { count: 0 };
      const answer = await guard.run(chargeCall(t, policy), charging(payments, executions));
      expect(answer).toEqual({ chargeId: 'ch_1', amountCents: 3000 });
      expect(executions.count).toBe(2);
      expect(payments.charges).toBe(1);
      expect(await guard.run(chargeCall(t, policy), () => 'must not run')).toEqual(answer);
      const record = await guard.inspect((await guard.list({ states: ['completed'] })).records[0]!.key);
      const history = await guard.resolutions(record!.key);
      expect(history[0]).toMatchObject({ action: 'released', by: 'reconcile' });
    });

    it('the body fails again after the release: one more round at most, then it stops as today', async () => {
      const t = tenant();
      const payments = new Payments({ dedupe: false });
      payments.refusedBeforeApplying = 2;
      let probes = 0;
      const guard = new Guard({ store: storeOf(), tenant: t });
      const policy = {
        kind: Idempotency.EFFECTFUL,
        reconcile: async (input: ReconcileInput) => {
          probes++;
          return lookup(payments)(input);
        },
      };
      const executions = { count: 0 };
      const error = await rejection(guard.run(chargeCall(t, policy), charging(payments, executions)));
      expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
      expect(executions.count).toBe(2);
      expect(probes).toBe(1);
      expect(payments.charges).toBe(0);
    });

    it('unknown: the record is left for an operator and the error says what the probe answered', async () => {
      const t = tenant();
      const payments = new Payments();
      payments.lostReplies = 1;
      const events: GuardEvent[] = [];
      const guard = new Guard({ store: storeOf(), tenant: t, onEvent: (event) => events.push(event) });
      const policy = {
        kind: Idempotency.EFFECTFUL,
        reconcile: () => ({ unknown: true as const, detail: 'provider\u001b[31m says maybe' }),
      };
      const executions = { count: 0 };
      const error = await rejection(guard.run(chargeCall(t, policy), charging(payments, executions)));
      expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
      expect((error as IndeterminateOutcomeError).reconcile).toEqual({ verdict: 'unknown', tries: 1 });
      expect((error as IndeterminateOutcomeError).reasonType).toBe('ETIMEDOUT');
      // The provider's words reach people escaped: no terminal escape sequence gets through.
      const reconciled = events.find((event) => event.type === 'tool.reconciled');
      expect(reconciled?.reconcile).toEqual({
        verdict: 'unknown',
        tries: 1,
        detail: 'provider\\u001b[31m says maybe',
      });
      const key = (error as IndeterminateOutcomeError).key;
      expect((await guard.inspect(key))?.state).toBe('indeterminate');
      expect(await guard.resolutions(key)).toEqual([]);
    });

    it('a probe that throws is tried `attempts` times, then the record is left as it was', async () => {
      const t = tenant();
      const payments = new Payments();
      payments.lostReplies = 1;
      const events: GuardEvent[] = [];
      const guard = new Guard({ store: storeOf(), tenant: t, onEvent: (event) => events.push(event) });
      let tries = 0;
      const policy = {
        kind: Idempotency.EFFECTFUL,
        reconcile: {
          attempts: 3,
          backoffMs: 5,
          probe: async () => {
            tries++;
            throw new TypeError('fetch failed: secret sk_live_123 in the message');
          },
        },
      };
      const error = await rejection(guard.run(chargeCall(t, policy), charging(payments, { count: 0 })));
      expect(tries).toBe(3);
      expect((error as IndeterminateOutcomeError).reconcile).toEqual({ verdict: 'failed', tries: 3 });
      expect(String((error as Error).message)).not.toContain('sk_live_123');
      const reconciled = events.find((event) => event.type === 'tool.reconciled');
      expect(reconciled?.reconcile).toEqual({ verdict: 'failed', tries: 3, errorType: 'TypeError' });
      expect(JSON.stringify(events)).not.toContain('sk_live_123');
      expect((await guard.inspect((error as IndeterminateOutcomeError).key))?.state).toBe('indeterminate');
    });

    it('a probe that hangs (and ignores its signal) is cut at its deadline, every try', async () => {
      const t = tenant();
      const payments = new Payments();
      payments.lostReplies = 1;
      const guard = new Guard({ store: storeOf(), tenant: t });
      const aborted: boolean[] = [];
      const policy = {
        kind: Idempotency.EFFECTFUL,
        reconcile: {
          attempts: 2,
          timeoutMs: 150,
          backoffMs: 1,
          probe: ({ signal }: ReconcileInput) => {
            signal.addEventListener('abort', () => aborted.push(true));
            return new Promise<ReconcileVerdict>(() => undefined);
          },
        },
      };
      const started = performance.now();
      const error = await rejection(guard.run(chargeCall(t, policy), charging(payments, { count: 0 })));
      expect(performance.now() - started).toBeLessThan(5000);
      expect((error as IndeterminateOutcomeError).reconcile).toEqual({ verdict: 'timeout', tries: 2 });
      expect(aborted).toEqual([true, true]);
      expect((await guard.inspect((error as IndeterminateOutcomeError).key))?.state).toBe('indeterminate');
    });

    it('a stale verdict after an operator released and a new life began settles nothing (expect: changed)', async () => {
      const t = tenant();
      const store = storeOf();
      const payments = new Payments({ dedupe: false });
      payments.refusedBeforeApplying = 1;
      const plain = new Guard({ store, tenant: t });
      const plainPolicy = { kind: Idempotency.EFFECTFUL };
      const executions = { count: 0 };
      // Life 1: refused before the charge, left indeterminate (no probe).
      const first = await rejection(plain.run(chargeCall(t, plainPolicy), charging(payments, executions)));
      const key = (first as IndeterminateOutcomeError).key;
      // A worker with a probe asks about life 1; its answer ("not happened", true when asked) is slow.
      const asked = gate();
      const answer = gate();
      const prober = new Guard({ store, tenant: t });
      const probingPolicy = {
        kind: Idempotency.EFFECTFUL,
        reconcile: async () => {
          asked.open();
          await answer.wait;
          return { happened: false as const };
        },
      };
      const probing = rejection(prober.run(chargeCall(t, probingPolicy), () => 'must not run'));
      await asked.wait;
      // Meanwhile an operator releases life 1, and life 2 charges and loses its reply.
      expect((await plain.resolve(key, { released: true }, { by: 'ops' })).status).toBe('resolved');
      payments.lostReplies = 1;
      await rejection(plain.run(chargeCall(t, plainPolicy), charging(payments, executions)));
      const life2 = await plain.inspect(key);
      expect(life2?.state).toBe('indeterminate');
      answer.open();
      const error = await probing;
      expect((error as IndeterminateOutcomeError).reconcile).toEqual({ verdict: 'changed', tries: 1 });
      // Life 2 is untouched: the stale "not happened" did not release a charge that happened.
      expect(await plain.inspect(key)).toMatchObject({ state: 'indeterminate', owner: life2?.owner });
      expect(await rejection(plain.run(chargeCall(t, plainPolicy), () => 'must not run'))).toSatisfy(
        IndeterminateOutcomeError.isInstance,
      );
      expect(payments.charges).toBe(1);
      expect(executions.count).toBe(2);
    });

    it('eight workers stopped on one record probe it at once: one charge, never two', async () => {
      const t = tenant();
      const store = storeOf();
      const payments = new Payments({ dedupe: false });
      payments.refusedBeforeApplying = 1;
      const executions = { count: 0 };
      const first = new Guard({ store, tenant: t });
      await rejection(
        first.run(chargeCall(t, { kind: Idempotency.EFFECTFUL }), charging(payments, executions)),
      );
      let probes = 0;
      const policy = {
        kind: Idempotency.EFFECTFUL,
        waitTimeoutMs: 10_000,
        reconcile: async (input: ReconcileInput) => {
          probes++;
          await sleep(Math.floor(Math.random() * 40));
          return lookup(payments)(input);
        },
      };
      const workers = Array.from({ length: 8 }, () => new Guard({ store, tenant: t }));
      const answers = await Promise.allSettled(
        workers.map((worker) => worker.run(chargeCall(t, policy), charging(payments, executions))),
      );
      expect(payments.charges).toBe(1);
      expect(probes).toBeGreaterThanOrEqual(1);
      for (const answer of answers) {
        if (answer.status === 'fulfilled')
          expect(answer.value).toEqual({ chargeId: 'ch_1', amountCents: 3000 });
        else expect(IndeterminateOutcomeError.isInstance(answer.reason)).toBe(true);
      }
      expect(answers.some((answer) => answer.status === 'fulfilled')).toBe(true);
      expect(await first.run(chargeCall(t, policy), () => 'must not run')).toEqual({
        chargeId: 'ch_1',
        amountCents: 3000,
      });
      expect(executions.count).toBe(2);
    });

    it('an operator asks the provider: shown only by default, applied with apply, never over a live holder', async () => {
      const t = tenant();
      const store = storeOf();
      const payments = new Payments();
      payments.lostReplies = 1;
      const events: GuardEvent[] = [];
      const guard = new Guard({ store, tenant: t, onEvent: (event) => events.push(event) });
      const policies = { charge: { kind: Idempotency.EFFECTFUL, reconcile: lookup(payments) } };
      const error = await rejection(
        guard.run(chargeCall(t, { kind: Idempotency.EFFECTFUL }), charging(payments, { count: 0 })),
      );
      const key = (error as IndeterminateOutcomeError).key;
      const shown = await guard.reconcile(key, { policies });
      expect(shown).toMatchObject({ status: 'probed', verdict: 'happened', tries: 1, detail: 'found ch_1' });
      expect(shown.applied).toBeUndefined();
      expect((await guard.inspect(key))?.state).toBe('indeterminate');
      const applied = await guard.reconcile(key, { policies, apply: true });
      expect(applied).toMatchObject({ status: 'probed', verdict: 'happened', applied: 'resolved' });
      expect(await guard.run(chargeCall(t, { kind: Idempotency.EFFECTFUL }), () => 'no')).toEqual({
        chargeId: 'ch_1',
        amountCents: 3000,
      });
      expect(events.filter((event) => event.type === 'tool.reconciled')).toHaveLength(2);

      // A live holder: the verdict is never forced over it.
      const running = gate();
      const release = gate();
      const live = guard.run(
        { ...chargeCall(t, { kind: Idempotency.EFFECTFUL }), arguments: { orderId: 'B-7', amountCents: 1 } },
        async () => {
          running.open();
          await release.wait;
          return 'paid';
        },
      );
      await running.wait;
      const liveKey = (await guard.list({ states: ['in_progress'] })).records[0]!.key;
      const refused = await guard.reconcile(liveKey, {
        apply: true,
        reconcile: () => ({ happened: false as const }),
      });
      expect(refused).toMatchObject({ status: 'probed', verdict: 'not_happened', applied: 'holder_alive' });
      release.open();
      expect(await live).toBe('paid');
      expect((await guard.inspect(liveKey))?.state).toBe('completed');
    });

    it("the probe's own lease is hidden from guard.list, and its tool name is reserved", async () => {
      const t = tenant();
      const store = storeOf();
      const payments = new Payments();
      payments.lostReplies = 1;
      const guard = new Guard({ store, tenant: t });
      const error = await rejection(
        guard.run(chargeCall(t, { kind: Idempotency.EFFECTFUL }), charging(payments, { count: 0 })),
      );
      const key = (error as IndeterminateOutcomeError).key;
      const asked = gate();
      const answer = gate();
      const probing = guard.reconcile(key, {
        reconcile: async () => {
          asked.open();
          await answer.wait;
          return { unknown: true as const };
        },
      });
      await asked.wait;
      const all = ['in_progress', 'indeterminate', 'lease_expired'] as const;
      const listed = await guard.list({ states: [...all] });
      expect(listed.records.map((record) => record.tool)).toEqual(['charge']);
      if (store.list !== undefined) {
        const raw = await store.list({ tenant: t, states: [...all], limit: 10 });
        expect(raw.records.map((record) => record.tool).sort()).toEqual(['charge', RECONCILE_TOOL]);
      }
      answer.open();
      expect(await probing).toMatchObject({ verdict: 'unknown' });
      const reserved = await rejection(
        guard.run({ ...chargeCall(t, { kind: Idempotency.EFFECTFUL }), tool: RECONCILE_TOOL }, () => 'no'),
      );
      expect(KeyDerivationError.isInstance(reserved)).toBe(true);
    });
  });
}
