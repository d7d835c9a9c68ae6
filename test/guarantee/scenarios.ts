// The hostile review of the guarantee (docs/guarantee.md), written once and run on every store:
// a record that vanishes while its body runs, a claim reply that arrives after the lease, an
// operator release racing a stalled holder, the caller's abort, an outcome no store can hold.
// Each counts the executions of the body and asserts the answers, not an interleaving.
import {
  currentToolCall,
  Guard,
  type GuardEvent,
  HolderAliveError,
  Idempotency,
  type IdempotencyPolicy,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  OutcomeEncodingError,
  OutcomePendingError,
} from '@toolfence/core';
import { describe, expect, it } from 'vitest';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Blocks the event loop (no timer, no reply, no renewal runs): a holder frozen for `ms`. */
export function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** How a promise settled, without throwing. */
async function outcomeOf(
  promise: Promise<unknown>,
): Promise<{ ok: true; value: unknown } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A gate a body or a store wrapper waits on until the test opens it. */
export function gate(): { readonly wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/**
 * A view of `store` whose every operation waits while it is paused: what one holder sees when
 * its process or its connection stalls, while other workers reach the store as usual.
 */
export function pausable(store: IdempotencyStore): {
  store: IdempotencyStore;
  pause(): void;
  resume(): void;
} {
  let paused: ReturnType<typeof gate> | undefined;
  const view = new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || property === 'close') {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        while (paused !== undefined) await paused.wait;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return {
    store: view,
    pause() {
      paused ??= gate();
    },
    resume() {
      const current = paused;
      paused = undefined;
      current?.open();
    },
  };
}

/**
 * A view of `store` whose first `count` claim replies arrive `delayMs` after the claim landed;
 * `onAnswered` runs as each claim's answer comes back from the store, before that delay.
 */
export function lateClaimReplies(
  store: IdempotencyStore,
  delayMs: number,
  count = 1,
  onAnswered: () => void = () => undefined,
): IdempotencyStore {
  let left = count;
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'claim') {
        return async (...claimArgs: Parameters<IdempotencyStore['claim']>) => {
          const result = await target.claim(...claimArgs);
          onAnswered();
          if (left-- > 0) await sleep(delayMs);
          return result;
        };
      }
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export interface GuaranteeOptions {
  /** Erase every record of the store (or of the tenant) while a body runs. */
  readonly loseRecords?: (tenant: string) => Promise<void>;
}

/**
 * Register the guarantee scenarios for a store. `storeOf` gives the store (shared by the cases);
 * `label` keeps tenants of different runs apart.
 */
export function describeGuarantee(
  storeName: string,
  storeOf: () => IdempotencyStore,
  label: string,
  options: GuaranteeOptions = {},
): void {
  let counter = 0;
  const tenant = () => `g-${label}-${++counter}`;
  const refund = (t: string, policy: IdempotencyPolicy, extra: Record<string, unknown> = {}) => ({
    tool: 'refund',
    arguments: { orderId: 'A-100', amount: 30 },
    runId: 'run-1',
    tenant: t,
    policy,
    ...extra,
  });

  describe(`the guarantee on ${storeName}: one call never enters its body twice`, () => {
    for (const kind of [Idempotency.EFFECTFUL, Idempotency.IDEMPOTENT] as const) {
      it(`${kind}: retention shorter than a 2.3 s stall (lease 1 s, retention 1 s) runs the body once and re-records its value`, async () => {
        const t = tenant();
        const guard = new Guard({ store: storeOf(), tenant: t });
        const policy = { kind, leaseMs: 1000, retentionMs: 1000, maxAttempts: 3 };
        let executions = 0;
        const answer = await guard.run(refund(t, policy), () => {
          executions++;
          blockEventLoop(2300);
          return `refunded ${executions}`;
        });
        expect(executions).toBe(1);
        expect(answer).toBe('refunded 1');
        // The record had expired with the stall; the known value was recorded in a new life.
        expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('refunded 1');
        expect(executions).toBe(1);
      });
    }

    it('EFFECTFUL: store.forget({ tenant }) while the body runs: one execution, the value re-recorded', async () => {
      const t = tenant();
      const store = storeOf();
      const guard = new Guard({ store, tenant: t });
      const policy = { kind: Idempotency.EFFECTFUL };
      const release = gate();
      let executions = 0;
      const running = guard.run(refund(t, policy), async () => {
        executions++;
        await release.wait;
        return 'refunded';
      });
      // The body runs once its claim is answered: the record exists then, on a loaded machine too.
      while (executions === 0) await sleep(5);
      expect(await store.forget({ tenant: t })).toBe(1);
      release.open();
      expect(await running).toBe('refunded');
      expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('refunded');
      expect(executions).toBe(1);
    });

    for (const honoursAbort of [false, true]) {
      it(`EFFECTFUL: the records are lost while the body runs (a body that ${honoursAbort ? 'honours' : 'ignores'} its abort): one execution`, async () => {
        const t = tenant();
        const store = storeOf();
        const events: GuardEvent[] = [];
        const guard = new Guard({ store, tenant: t, onEvent: (event) => events.push(event) });
        // A short lease, so the lost record is noticed by a renewal while the body runs.
        const policy = { kind: Idempotency.EFFECTFUL, leaseMs: 400, heartbeatMs: 100, waitTimeoutMs: 2000 };
        let executions = 0;
        const running = outcomeOf(
          guard.run(refund(t, policy), async () => {
            executions++;
            const { signal } = currentToolCall()!;
            // A body that honours its abort runs until the renewal that finds the record gone
            // aborts it (up to 10 s, so a slow store on a loaded machine still gets there).
            for (let i = 0; i < (honoursAbort ? 400 : 30); i++) {
              if (honoursAbort) signal.throwIfAborted();
              await sleep(25);
            }
            return 'refunded';
          }),
        );
        // Lose the records once the body runs (a claim answered late on a loaded machine must not
        // let the loss land before the claim), and a little into it.
        while (executions === 0) await sleep(5);
        await sleep(60);
        await (options.loseRecords ?? ((lost) => store.forget({ tenant: lost }).then(() => undefined)))(t);
        const outcome = await running;
        expect(executions).toBe(1);
        if (honoursAbort) {
          // The body stopped at its fenced signal: its outcome is unknown, and says so.
          expect(outcome.ok).toBe(false);
          const error = (outcome as { error: unknown }).error;
          expect(IndeterminateOutcomeError.isInstance(error)).toBe(true);
          expect(error).toMatchObject({ reasonType: 'RecordLost' });
          const again = await rejection(guard.run(refund(t, policy), () => 'must not run'));
          expect(IndeterminateOutcomeError.isInstance(again)).toBe(true);
        } else {
          // The body ran to its end: its value is known, answered and recorded in a new life.
          expect(outcome).toEqual({ ok: true, value: 'refunded' });
          expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('refunded');
        }
        expect(executions).toBe(1);
        expect(events.filter((event) => event.type === 'tool.started')).toHaveLength(1);
      });
    }

    it('EFFECTFUL: a stalled holder, another caller marks it indeterminate, an operator releases it: the holder does not charge again', async () => {
      const t = tenant();
      const shared = storeOf();
      const holderView = pausable(shared);
      const policy = { kind: Idempotency.EFFECTFUL, leaseMs: 300, heartbeatMs: 100, waitTimeoutMs: 10_000 };
      const holder = new Guard({ store: holderView.store, tenant: t });
      const other = new Guard({ store: shared, tenant: t });
      const finish = gate();
      let charges = 0;
      const running = holder.run(refund(t, policy), async () => {
        charges++;
        holderView.pause(); // the holder's process stalls: no renewal, no reply reaches it
        await finish.wait;
        return 'charged by the holder';
      });
      while (charges === 0) await sleep(5); // the body runs (the claim may answer late under load)
      await sleep(600); // past the lease, by the store's clock
      const seen = await rejection(other.run(refund(t, policy), () => 'must not run'));
      expect(IndeterminateOutcomeError.isInstance(seen)).toBe(true);
      const key = (seen as IndeterminateOutcomeError).key;
      // The operator checks the provider too early, sees nothing, and releases the key.
      expect(await other.resolve(key, { released: true }, { tenant: t })).toEqual({ status: 'resolved' });
      finish.open();
      holderView.resume();
      expect(await running).toBe('charged by the holder');
      expect(charges).toBe(1);
      // The holder's known value is recorded again: a repeat replays it instead of charging.
      expect(await other.run(refund(t, policy), () => 'must not run')).toBe('charged by the holder');
      expect(charges).toBe(1);
    });

    it('EFFECTFUL: a body still running after its caller was answered is never offered to an operator (issue #27, two refunds)', async () => {
      const t = tenant();
      const guard = new Guard({ store: storeOf(), tenant: t });
      const policy = {
        kind: Idempotency.EFFECTFUL,
        timeoutMs: 100,
        leaseMs: 1000,
        heartbeatMs: 250,
        waitTimeoutMs: 300,
      };
      const provider = gate();
      let charges = 0;
      let startedAtMs = Number.NaN;
      const body = async () => {
        startedAtMs = performance.now();
        // The provider answers after 1.5 s; the body ignores its signal, as a real HTTP call would.
        await Promise.race([sleep(1500), provider.wait]);
        charges++;
        return 'refunded';
      };
      const stopped = await rejection(guard.run(refund(t, policy), body));
      expect(IndeterminateOutcomeError.isInstance(stopped)).toBe(true);
      const key = (stopped as IndeterminateOutcomeError).key;
      // 500 ms into the body (past waitTimeoutMs after the timeout): what the operator sees.
      await sleep(Math.max(0, startedAtMs + 500 - performance.now()));
      const seen = await guard.inspect(key);
      expect(seen).toMatchObject({ state: 'in_progress', fence: 1 });
      const page = await guard.list({ states: ['in_progress'] });
      const listed = page.records.find((record) => record.key === key);
      expect(listed?.leaseExpiresAtMs).toBeGreaterThan(page.nowMs);
      // The operator follows the manual ("nothing happened yet at the provider") and releases.
      const refused = await rejection(
        guard.resolve(key, { released: true }, { reason: 'nothing at the provider' }),
      );
      expect(HolderAliveError.isInstance(refused)).toBe(true);
      expect(refused).toMatchObject({ key, owner: seen?.owner });
      // The retry waits for the running body instead of paying again.
      const retried = await outcomeOf(
        guard.run(refund(t, policy), async () => {
          charges++;
          return 'refunded twice';
        }),
      );
      expect(retried.ok).toBe(false);
      expect(OutcomePendingError.isInstance((retried as { error: unknown }).error)).toBe(true);
      // The first body pays; its late value is the recorded outcome.
      const deadline = performance.now() + 10_000;
      while ((await guard.inspect(key))?.state !== 'completed' && performance.now() < deadline)
        await sleep(25);
      expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('refunded');
      expect(charges).toBe(1);
    });

    it("EFFECTFUL: an operator's decision keeps the retention the call was claimed with (issue #27, item 4)", async () => {
      const t = tenant();
      const events: GuardEvent[] = [];
      const store = storeOf();
      const guard = new Guard({ store, tenant: t, onEvent: (event) => events.push(event) });
      const weekMs = 7 * 86_400_000;
      const policy = { kind: Idempotency.EFFECTFUL, retentionMs: weekMs };
      const stopped = await rejection(
        guard.run(refund(t, policy), () => Promise.reject(new Error('socket hang up'))),
      );
      const key = (stopped as IndeterminateOutcomeError).key;
      expect((await guard.inspect(key))?.retentionMs).toBe(weekMs);
      // "It happened", as the console and the CLI send it: no retention of the operator's own.
      expect(await guard.resolve(key, { outcome: 'refunded' }, { by: 'oncall' })).toEqual({
        status: 'resolved',
      });
      const settled = await guard.inspect(key);
      // Kept a week from the resolution, not the guard's default day (a run resumed on day 2 replays).
      expect((settled?.expiresAtMs ?? 0) - (settled?.updatedAtMs ?? 0)).toBe(weekMs);
      expect(events.find((event) => event.type === 'tool.resolved')?.resolution).toMatchObject({
        retentionMs: weekMs,
        retentionFrom: 'call',
      });
      // An operator may still choose another.
      const other = await rejection(
        guard.run(refund(t, policy, { arguments: { orderId: 'A-101' } }), () =>
          Promise.reject(new Error('reset')),
        ),
      );
      const otherKey = (other as IndeterminateOutcomeError).key;
      await guard.resolve(otherKey, { outcome: 'refunded' }, { retentionMs: 3_600_000 });
      const shorter = await guard.inspect(otherKey);
      expect((shorter?.expiresAtMs ?? 0) - (shorter?.updatedAtMs ?? 0)).toBe(3_600_000);
    });

    it("EFFECTFUL: an operator's outcome is written only with the codec that wrote the record (issue #27, item 5)", async () => {
      const t = tenant();
      const store = storeOf();
      // The application's codec: its outcomes are not JSON (a prefix stands for superjson, encryption).
      const appCodec = {
        name: 'prefixed-json',
        encode: (value: unknown) => `v1:${JSON.stringify(value)}`,
        decode: (text: string) => JSON.parse(text.slice(3)) as unknown,
      };
      const app = new Guard({ store, tenant: t, codec: appCodec });
      const policy = { kind: Idempotency.EFFECTFUL };
      const stopped = await rejection(
        app.run(refund(t, policy), () => Promise.reject(new Error('socket hang up'))),
      );
      const key = (stopped as IndeterminateOutcomeError).key;
      expect((await app.inspect(key))?.codec).toBe('prefixed-json');
      // An operator tool on the default JSON codec (the CLI's Guard) refuses before writing.
      const operatorTool = new Guard({ store, tenant: t });
      const refused = await rejection(operatorTool.resolve(key, { outcome: 'refunded' }));
      expect(OutcomeEncodingError.isInstance(refused)).toBe(true);
      expect((refused as Error).message).toContain('the record was written with the codec "prefixed-json"');
      expect((refused as Error).message).toContain("the application's own Guard");
      expect(await app.inspect(key)).toMatchObject({ state: 'indeterminate' });
      expect(await operatorTool.resolutions(key)).toEqual([]);
      // The application's own Guard resolves it; the replay decodes it.
      expect(await app.resolve(key, { outcome: 'refunded' })).toEqual({ status: 'resolved' });
      expect(await app.run(refund(t, policy), () => 'must not run')).toBe('refunded');
    });

    for (const kind of [Idempotency.EFFECTFUL, Idempotency.IDEMPOTENT] as const) {
      it(`${kind}: a claim reply that arrives after the lease does not enter the body; the call answers from the store`, async () => {
        const t = tenant();
        const shared = storeOf();
        const leaseMs = 500;
        const policy = { kind, leaseMs, heartbeatMs: 150, waitTimeoutMs: 10_000 };
        let answered = false;
        const late = new Guard({
          store: lateClaimReplies(shared, 2 * leaseMs, 1, () => {
            answered = true;
          }),
          tenant: t,
        });
        const other = new Guard({ store: shared, tenant: t });
        let charges = 0;
        const body = (who: string) => async () => {
          charges++;
          return `charged by ${who}`;
        };
        const first = late.run(refund(t, policy), body('the late holder'));
        // The store set the lease before it answered: 1.1 leases after the answer it has expired,
        // however late a loaded machine got the claim to the store.
        while (!answered) await sleep(5);
        await sleep(1.1 * leaseMs);
        if (kind === Idempotency.EFFECTFUL) {
          // Another caller finds the lease expired: indeterminate, never re-run.
          const seen = await rejection(other.run(refund(t, policy), body('the second caller')));
          expect(IndeterminateOutcomeError.isInstance(seen)).toBe(true);
          // An operator finds no charge at the provider and releases; a third caller charges.
          await sleep(0.4 * leaseMs);
          const key = (seen as IndeterminateOutcomeError).key;
          expect(await other.resolve(key, { released: true }, { tenant: t })).toEqual({ status: 'resolved' });
          expect(await other.run(refund(t, policy), body('the third caller'))).toBe(
            'charged by the third caller',
          );
        } else {
          // IDEMPOTENT: the second caller takes over with fence 2 and runs.
          expect(await other.run(refund(t, policy), body('the second caller'))).toBe(
            'charged by the second caller',
          );
        }
        // The late reply reaches the first caller now: it must not charge again.
        const answer = await first;
        expect(charges).toBe(1);
        expect(answer).toBe(
          kind === Idempotency.EFFECTFUL ? 'charged by the third caller' : 'charged by the second caller',
        );
      });
    }

    it("EFFECTFUL: the caller's abort is answered at once; the claim is held until the body settles, so a retry replays", async () => {
      const t = tenant();
      const guard = new Guard({ store: storeOf(), tenant: t });
      const policy = { kind: Idempotency.EFFECTFUL };
      const controller = new AbortController();
      let charges = 0;
      let abortedAtMs = Number.NaN;
      const stopped = await rejection(
        guard.run(refund(t, policy, { signal: controller.signal }), async () => {
          // The caller aborts once the body runs (timed from the body, not the claim, whose
          // duration a loaded machine stretches).
          setTimeout(() => {
            abortedAtMs = performance.now();
            controller.abort(new Error('the user closed the tab'));
          }, 20);
          await sleep(300); // ignores its signal; the effect happens at 300 ms
          charges++;
          return 'refunded';
        }),
      );
      // Answered at once: long before the body's 300 ms are over.
      expect(performance.now() - abortedAtMs).toBeLessThan(200);
      expect(charges).toBe(0);
      expect(IndeterminateOutcomeError.isInstance(stopped)).toBe(true);
      expect((stopped as Error).message).toContain('the user closed the tab');
      expect((stopped as Error).cause).toMatchObject({ message: 'the user closed the tab' });
      // A retry right away waits for the still-running body and replays its value.
      expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('refunded');
      expect(charges).toBe(1);
    });

    it("IDEMPOTENT: the caller's abort is answered at once with its reason; a retry replays the late value", async () => {
      const t = tenant();
      const guard = new Guard({ store: storeOf(), tenant: t });
      const policy = { kind: Idempotency.IDEMPOTENT };
      const controller = new AbortController();
      let runs = 0;
      const stopped = await rejection(
        guard.run(refund(t, policy, { signal: controller.signal }), async () => {
          runs++;
          setTimeout(() => controller.abort(new Error('cancelled')), 20);
          await sleep(200);
          return 'saved';
        }),
      );
      expect(stopped).toMatchObject({ message: 'cancelled' });
      expect(await guard.run(refund(t, policy), () => 'must not run')).toBe('saved');
      expect(runs).toBe(1);
    });

    for (const kind of [Idempotency.EFFECTFUL, Idempotency.IDEMPOTENT] as const) {
      it(`${kind}: an outcome no store can hold is settled at once, never left to the lease`, async () => {
        const t = tenant();
        const store = storeOf();
        // A codec whose output has a lone surrogate: no store can keep it byte for byte.
        const guard = new Guard({
          store,
          tenant: t,
          codec: { encode: () => 'broken \uD800 text', decode: (text) => text },
        });
        const policy = { kind, leaseMs: 60_000 };
        const failed = await rejection(guard.run(refund(t, policy), () => 'value'));
        if (kind === Idempotency.EFFECTFUL) {
          expect(IndeterminateOutcomeError.isInstance(failed)).toBe(true);
          const key = (failed as IndeterminateOutcomeError).key;
          const record = await store.get({ tenant: t, key });
          expect(record).toMatchObject({ state: 'indeterminate', error: { type: 'OutcomeEncodingError' } });
        } else {
          expect(OutcomeEncodingError.isInstance(failed)).toBe(true);
          // Released at once: the next call runs now, not after a 60 s lease.
          let ran = false;
          const plain = new Guard({ store, tenant: t });
          await plain.run(refund(t, policy), () => {
            ran = true;
            return 'ok';
          });
          expect(ran).toBe(true);
        }
      });
    }
  });
}
