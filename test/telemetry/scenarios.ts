// Every toolfence.outcome (docs/observability.md) produced for real on a store, with the span
// and the metric points it documents. Run on MemoryStore and RedisStore by the *.test.ts files.
import { randomUUID } from 'node:crypto';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  ExecutionAbandonedError,
  Guard,
  type GuardEvent,
  type GuardedCall,
  Idempotency,
  IdempotencyConflictError,
  type IdempotencyPolicy,
  type IdempotencyStore,
  IndeterminateOutcomeError,
  idempotencyKey,
  OutcomePendingError,
  StoreUnavailableError,
} from '@toolfence/core';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/wait-for.js';
import { eventNames, FaultyStore, type Point, Telemetry } from './harness.js';

/** What no span, span event or metric point may ever hold: arguments and outcomes. */
const SECRET = 'secret-4711';
const INTERNAL = 0;
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

const effectful: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL, keyArguments: ['orderId'] };
const idempotent: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };

interface Setup {
  readonly telemetry: Telemetry;
  readonly tenant: string;
  readonly events: GuardEvent[];
  guard(store?: IdempotencyStore): Guard;
}

function gate(): { readonly wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The span of the call `callId` (each test call has its own). */
function spanOf(telemetry: Telemetry, callId: string): ReadableSpan {
  const spans = telemetry.toolSpans().filter((span) => span.attributes['gen_ai.tool.call.id'] === callId);
  expect(spans).toHaveLength(1);
  return spans[0]!;
}

/** The span and the events tell the same story: the span's guard events are the listener's. */
function expectSameStory(span: ReadableSpan, events: readonly GuardEvent[], callId: string): void {
  const told = events.filter((event) => event.callId === callId).map((event) => `toolfence.${event.type}`);
  expect(eventNames(span).filter((name) => name.startsWith('toolfence.tool.'))).toEqual(told);
}

function expectToolSpan(
  span: ReadableSpan,
  expected: { tool: string; kind: string; outcome: string; store: string; errorType?: string },
): void {
  expect(span.name).toBe(`execute_tool ${expected.tool}`);
  expect(span.kind).toBe(INTERNAL);
  expect(span.attributes['gen_ai.operation.name']).toBe('execute_tool');
  expect(span.attributes['gen_ai.tool.name']).toBe(expected.tool);
  expect(span.attributes['toolfence.kind']).toBe(expected.kind);
  expect(span.attributes['toolfence.outcome']).toBe(expected.outcome);
  expect(span.attributes['toolfence.store.name']).toBe(expected.store);
  expect(span.attributes['error.type']).toBe(expected.errorType);
  expect(span.status.code).toBe(expected.errorType === undefined ? STATUS_UNSET : STATUS_ERROR);
  // Never the arguments, never the outcome, not even in an error's message.
  expect(span.status.message).toBeUndefined();
  expect(JSON.stringify({ attributes: span.attributes, events: span.events })).not.toContain(SECRET);
  if (expected.kind !== Idempotency.READ_ONLY) {
    expect(span.attributes['toolfence.idempotency_key']).toMatch(/^[0-9a-f]{64}$/);
  }
}

function pointsOf(points: readonly Point[], metric: string, attributes: Record<string, string>): Point[] {
  return points.filter(
    (point) =>
      point.metric === metric &&
      Object.entries(attributes).every(([name, value]) => point.attributes[name] === value),
  );
}

/** The metric points a set of answered calls leave: one count, one overhead sample each. */
async function expectCalls(
  telemetry: Telemetry,
  tool: string,
  kind: string,
  outcome: string,
  count: number,
  errorType?: string,
): Promise<Point[]> {
  const points = await telemetry.points();
  const attributes = { 'gen_ai.tool.name': tool, 'toolfence.kind': kind, 'toolfence.outcome': outcome };
  const calls = pointsOf(points, 'toolfence.guard.calls', attributes);
  expect(calls).toHaveLength(1);
  expect(calls[0]).toMatchObject({ unit: '{call}', value: count });
  expect(calls[0]!.attributes['error.type']).toBe(errorType);
  const overhead = pointsOf(points, 'toolfence.guard.overhead.duration', attributes);
  expect(overhead).toHaveLength(1);
  expect(overhead[0]).toMatchObject({ unit: 's', value: count });
  expect(overhead[0]!.sum).toBeGreaterThan(0);
  // Every call was answered: none is in flight.
  for (const active of pointsOf(points, 'toolfence.guard.call.active', {})) expect(active.value).toBe(0);
  expect(JSON.stringify(points)).not.toContain(SECRET);
  return points;
}

function call(tool: string, policy: IdempotencyPolicy, args: Record<string, unknown>, runId = 'run-1') {
  return { tool, policy, arguments: args, runId, callId: randomUUID() } satisfies GuardedCall;
}

/**
 * The scenarios of docs/observability.md on `store()`, named `storeName` on the span. `store`
 * must give one store shared by the whole file; each test uses its own tenant.
 */
export function describeTelemetry(label: string, store: () => IdempotencyStore, storeName: string): void {
  describe(`telemetry on ${label}: every outcome has its span and metric points`, () => {
    let setup: Setup;
    const make = (): Setup => {
      const telemetry = new Telemetry();
      const tenant = `otel-${randomUUID()}`;
      const events: GuardEvent[] = [];
      return {
        telemetry,
        tenant,
        events,
        guard: (over = store()) =>
          new Guard({
            store: over,
            tenant,
            onEvent: (event) => events.push(event),
            telemetry: { tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider },
          }),
      };
    };
    afterEach(async () => {
      await setup?.telemetry.shutdown();
    });

    it('executed: the body ran; its claim and record are span events with their duration', async () => {
      setup = make();
      const guard = setup.guard();
      const first = call('refund', effectful, { orderId: SECRET });
      await expect(guard.run(first, () => ({ refundId: SECRET }))).resolves.toEqual({ refundId: SECRET });
      const span = spanOf(setup.telemetry, first.callId);
      expectToolSpan(span, { tool: 'refund', kind: 'effectful', outcome: 'executed', store: storeName });
      expect(span.attributes).toMatchObject({
        'gen_ai.tool.call.id': first.callId,
        'gen_ai.conversation.id': 'run-1',
        'toolfence.tenant': setup.tenant,
        'toolfence.attempt': 1,
        'toolfence.fence': 1,
        'toolfence.takeover': false,
        'toolfence.recorded': true,
      });
      expect(eventNames(span)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.started',
        'toolfence.store.complete',
        'toolfence.tool.completed',
      ]);
      const [claim, , complete] = span.events;
      expect(claim!.attributes).toMatchObject({ 'toolfence.store.status': 'acquired' });
      expect(complete!.attributes).toMatchObject({ 'toolfence.store.status': 'completed' });
      for (const roundTrip of [claim!, complete!]) {
        expect(roundTrip.attributes!['toolfence.store.duration']).toBeGreaterThan(0);
        expect(roundTrip.attributes!['toolfence.store.duration']).toBeLessThan(5);
      }
      // Store events are stamped at the round trip's start, inside the span.
      const ms = ([seconds, nanos]: readonly [number, number]) => seconds * 1000 + nanos / 1e6;
      for (const event of span.events) {
        expect(ms(event.time)).toBeGreaterThanOrEqual(ms(span.startTime) - 1);
        expect(ms(event.time)).toBeLessThanOrEqual(ms(span.endTime) + 1);
      }
      expect(ms(claim!.time)).toBeLessThanOrEqual(ms(span.events[1]!.time));
      expectSameStory(span, setup.events, first.callId);
      const points = await expectCalls(setup.telemetry, 'refund', 'effectful', 'executed', 1);
      expect(pointsOf(points, 'toolfence.guard.wait.duration', {})).toHaveLength(0);
    });

    it('replayed: a repeat gets the recorded outcome without the body', async () => {
      setup = make();
      const guard = setup.guard();
      await guard.run(call('refund', effectful, { orderId: SECRET }), () => SECRET);
      const repeat = call('refund', effectful, { orderId: SECRET });
      await expect(guard.run(repeat, () => 'never')).resolves.toBe(SECRET);
      const span = spanOf(setup.telemetry, repeat.callId);
      expectToolSpan(span, { tool: 'refund', kind: 'effectful', outcome: 'replayed', store: storeName });
      expect(span.attributes).toMatchObject({ 'toolfence.attempt': 1, 'toolfence.fence': 1 });
      expect(eventNames(span)).toEqual(['toolfence.store.claim', 'toolfence.tool.deduplicated']);
      expect(span.events[0]!.attributes).toMatchObject({ 'toolfence.store.status': 'completed' });
      expectSameStory(span, setup.events, repeat.callId);
      await expectCalls(setup.telemetry, 'refund', 'effectful', 'replayed', 1);
      await expectCalls(setup.telemetry, 'refund', 'effectful', 'executed', 1);
    });

    it("waited: another worker's outcome after waiting; the wait is timed apart from the overhead", async () => {
      setup = make();
      const holder = setup.guard();
      const waiter = setup.guard();
      const entered = gate();
      const release = gate();
      const first = holder.run(call('refund', effectful, { orderId: SECRET }), async () => {
        entered.open();
        await release.wait;
        return SECRET;
      });
      await entered.wait;
      const second = call('refund', effectful, { orderId: SECRET });
      const waiting = waiter.run(second, () => 'never');
      while (!setup.events.some((event) => event.callId === second.callId && event.type === 'tool.waiting')) {
        await sleep(5);
      }
      await sleep(100);
      release.open();
      await expect(first).resolves.toBe(SECRET);
      await expect(waiting).resolves.toBe(SECRET);
      const span = spanOf(setup.telemetry, second.callId);
      expectToolSpan(span, { tool: 'refund', kind: 'effectful', outcome: 'waited', store: storeName });
      const names = eventNames(span);
      expect(names.slice(0, 3)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.waiting',
        'toolfence.store.waitForSettle',
      ]);
      expect(names.at(-1)).toBe('toolfence.tool.deduplicated');
      expectSameStory(span, setup.events, second.callId);
      const points = await expectCalls(setup.telemetry, 'refund', 'effectful', 'waited', 1);
      const [wait] = pointsOf(points, 'toolfence.guard.wait.duration', { 'toolfence.outcome': 'waited' });
      const [overhead] = pointsOf(points, 'toolfence.guard.overhead.duration', {
        'toolfence.outcome': 'waited',
      });
      expect(wait).toMatchObject({ unit: 's', value: 1 });
      expect(wait!.sum).toBeGreaterThanOrEqual(0.09);
      expect(overhead!.sum).toBeLessThan(wait!.sum!);
    });

    it('waited: an identical call in flight in this process is followed, with no store round trip', async () => {
      setup = make();
      const guard = setup.guard();
      const release = gate();
      const leader = guard.run(call('refund', effectful, { orderId: SECRET }), async () => {
        await release.wait;
        return SECRET;
      });
      const followerCall = call('refund', effectful, { orderId: SECRET });
      const follower = guard.run(followerCall, () => 'never');
      await sleep(50);
      release.open();
      await expect(Promise.all([leader, follower])).resolves.toEqual([SECRET, SECRET]);
      const span = spanOf(setup.telemetry, followerCall.callId);
      expectToolSpan(span, { tool: 'refund', kind: 'effectful', outcome: 'waited', store: storeName });
      expect(eventNames(span)).toEqual(['toolfence.tool.waiting', 'toolfence.tool.deduplicated']);
      const points = await expectCalls(setup.telemetry, 'refund', 'effectful', 'waited', 1);
      const [wait] = pointsOf(points, 'toolfence.guard.wait.duration', { 'toolfence.outcome': 'waited' });
      expect(wait!.sum).toBeGreaterThanOrEqual(0.04);
    });

    it('indeterminate: an EFFECTFUL body that threw; error.type, ERROR status, no message', async () => {
      setup = make();
      const guard = setup.guard();
      const failing = call('refund', effectful, { orderId: SECRET });
      await expect(
        guard.run(failing, () => {
          throw new Error(`card ${SECRET} declined`);
        }),
      ).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      const span = spanOf(setup.telemetry, failing.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'indeterminate',
        store: storeName,
        errorType: 'IndeterminateOutcomeError',
      });
      expect(eventNames(span)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.started',
        'toolfence.store.markIndeterminate',
        'toolfence.tool.indeterminate',
      ]);
      expect(span.events[3]!.attributes).toMatchObject({ 'error.type': 'Error' });
      expectSameStory(span, setup.events, failing.callId);
      await expectCalls(
        setup.telemetry,
        'refund',
        'effectful',
        'indeterminate',
        1,
        'IndeterminateOutcomeError',
      );
    });

    // Issue 27, item 2: the caller answered before the body settled (rule G4) is `interrupted`,
    // not `indeterminate`: nothing needs a decision unless the record is then left indeterminate.
    it('interrupted: the caller aborted, the body then returned: the record completes, no indeterminate anywhere', async () => {
      setup = make();
      const guard = setup.guard();
      const controller = new AbortController();
      const body = gate();
      const started = gate();
      const interrupted = { ...call('refund', effectful, { orderId: SECRET }), signal: controller.signal };
      const answer = guard.run(interrupted, async () => {
        started.open();
        await body.wait; // ignores its signal: settles after its caller was answered
        return { refundId: 'r-1' };
      });
      await started.wait;
      controller.abort(new Error('the client went away'));
      await expect(answer).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      const span = spanOf(setup.telemetry, interrupted.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'interrupted',
        store: storeName,
        errorType: 'IndeterminateOutcomeError',
      });
      expect(eventNames(span).filter((name) => name.startsWith('toolfence.tool.'))).toEqual([
        'toolfence.tool.started',
        'toolfence.tool.interrupted',
      ]);
      await expectCalls(
        setup.telemetry,
        'refund',
        'effectful',
        'interrupted',
        1,
        'IndeterminateOutcomeError',
      );
      body.open();
      await waitFor(
        () => setup.events.map((event) => event.type),
        (types) => types.includes('tool.completed'),
        { message: 'the late completion' },
      );
      expect(setup.events.map((event) => event.type)).toEqual([
        'tool.started',
        'tool.interrupted',
        'tool.completed',
      ]);
      const points = await setup.telemetry.points();
      const indeterminate = pointsOf(points, 'toolfence.guard.calls', {
        'toolfence.outcome': 'indeterminate',
      });
      expect(indeterminate).toEqual([]);
      // The retry replays: nothing was left to settle.
      expect(
        await guard.run({ ...interrupted, signal: undefined }, () => ({ refundId: 'must not run' })),
      ).toEqual({
        refundId: 'r-1',
      });
    });

    it('interrupted, then the body failed: the record is left indeterminate, and that is told late', async () => {
      setup = make();
      const guard = setup.guard();
      const policy: IdempotencyPolicy = { ...effectful, timeoutMs: 50 };
      const body = gate();
      const timedOut = call('refund', policy, { orderId: SECRET });
      const answer = guard.run(timedOut, async () => {
        await body.wait;
        throw new Error(`card ${SECRET} declined`);
      });
      await expect(answer).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      const span = spanOf(setup.telemetry, timedOut.callId);
      expect(span.attributes['toolfence.outcome']).toBe('interrupted');
      await expectCalls(
        setup.telemetry,
        'refund',
        'effectful',
        'interrupted',
        1,
        'IndeterminateOutcomeError',
      );
      body.open();
      await waitFor(
        () => setup.events.map((event) => event.type),
        (types) => types.includes('tool.indeterminate'),
        { message: 'the late indeterminate' },
      );
      expect(setup.events.map((event) => event.type)).toEqual([
        'tool.started',
        'tool.interrupted',
        'tool.indeterminate',
      ]);
      expect(setup.events[1]?.error?.type).toBe('ToolTimeoutError');
      expect(setup.events[2]?.error?.type).toBe('Error');
      // The metric gets a late point, outcome indeterminate: what the page-worthy alert counts.
      const late = pointsOf(await setup.telemetry.points(), 'toolfence.guard.calls', {
        'toolfence.outcome': 'indeterminate',
      });
      expect(late).toHaveLength(1);
      expect(late[0]).toMatchObject({ value: 1 });
      expect(late[0]!.attributes).toMatchObject({
        'gen_ai.tool.name': 'refund',
        'toolfence.kind': 'effectful',
        'toolfence.late': true,
        'error.type': 'Error',
      });
      expect(JSON.stringify(setup.events)).not.toContain(SECRET);
      const key = span.attributes['toolfence.idempotency_key'] as string;
      expect(await store().get({ tenant: setup.tenant, key })).toMatchObject({ state: 'indeterminate' });
    });

    it('indeterminate: the lease lost while the body ran, then the store unreachable (the event says so too)', async () => {
      setup = make();
      const faulty = new FaultyStore(store());
      faulty.faults.loseRenewals = true;
      const guard = setup.guard(faulty);
      // The lease is lost at the first heartbeat (50 ms), whatever its length; it is long so that
      // a claim answered late on a loaded machine still leaves the body a live lease to start on
      // (a reply later than the lease sends the guard down another path: lease-confirmation.ts).
      const policy: IdempotencyPolicy = { ...effectful, leaseMs: 2_000, heartbeatMs: 50 };
      const lost = call('refund', policy, { orderId: SECRET });
      const answer = guard.run(lost, ({ signal }) => {
        return new Promise((_, reject) =>
          signal.addEventListener('abort', () => {
            faulty.faults.claimUnreachable = true;
            reject(signal.reason);
          }),
        );
      });
      await expect(answer).rejects.toBeInstanceOf(IndeterminateOutcomeError);
      const span = spanOf(setup.telemetry, lost.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'indeterminate',
        store: 'FaultyStore',
        errorType: 'IndeterminateOutcomeError',
      });
      const guardEvents = eventNames(span).filter((name) => name.startsWith('toolfence.tool.'));
      expect(guardEvents).toEqual([
        'toolfence.tool.started',
        'toolfence.tool.fenced',
        'toolfence.tool.indeterminate',
      ]);
      expectSameStory(span, setup.events, lost.callId);
      await expectCalls(
        setup.telemetry,
        'refund',
        'effectful',
        'indeterminate',
        1,
        'IndeterminateOutcomeError',
      );
    });

    it('abandoned: an IDEMPOTENT key whose last holder was lost at maxAttempts', async () => {
      setup = make();
      const guard = setup.guard();
      const policy: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT, maxAttempts: 1 };
      const args = { query: SECRET };
      const key = idempotencyKey({ tenant: setup.tenant, runId: 'run-1', tool: 'search', arguments: args });
      // A holder that claimed and died: its lease runs out and nobody renews it.
      await store().claim(
        { tenant: setup.tenant, key },
        {
          tool: 'search',
          fingerprint: key,
          owner: 'a-worker-that-died',
          leaseMs: 100,
          retentionMs: 60_000,
          mode: 'at-least-once',
          maxAttempts: 1,
          checkFingerprint: false,
        },
      );
      await sleep(200);
      const late = call('search', policy, args);
      await expect(guard.run(late, () => 'never')).rejects.toBeInstanceOf(ExecutionAbandonedError);
      const span = spanOf(setup.telemetry, late.callId);
      expectToolSpan(span, {
        tool: 'search',
        kind: 'idempotent',
        outcome: 'abandoned',
        store: storeName,
        errorType: 'ExecutionAbandonedError',
      });
      expect(eventNames(span)).toEqual(['toolfence.store.claim', 'toolfence.tool.abandoned']);
      expect(span.events[0]!.attributes).toMatchObject({ 'toolfence.store.status': 'abandoned' });
      expectSameStory(span, setup.events, late.callId);
      await expectCalls(setup.telemetry, 'search', 'idempotent', 'abandoned', 1, 'ExecutionAbandonedError');
    });

    it('fenced: the lease is lost while the body runs; the takeover that follows is on the span', async () => {
      setup = make();
      const faulty = new FaultyStore(store());
      faulty.faults.loseRenewals = true;
      const guard = setup.guard(faulty);
      // Lost at the first heartbeat (50 ms); the takeover waits for the store's lease to run out,
      // long enough that a late claim reply on a loaded machine still finds it live.
      const policy: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT, leaseMs: 1_500, heartbeatMs: 50 };
      const fencedCall = call('reindex', policy, { index: SECRET });
      let runs = 0;
      const answer = guard.run(fencedCall, async ({ signal }) => {
        if (++runs > 1) return 'done';
        // The first run honours its lost lease.
        await new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        return 'never';
      });
      await expect(answer).resolves.toBe('done');
      expect(runs).toBe(2);
      const span = spanOf(setup.telemetry, fencedCall.callId);
      expectToolSpan(span, { tool: 'reindex', kind: 'idempotent', outcome: 'fenced', store: 'FaultyStore' });
      // The second run took the key over once the lost lease ran out in the store.
      expect(span.attributes).toMatchObject({
        'toolfence.attempt': 2,
        'toolfence.fence': 2,
        'toolfence.takeover': true,
      });
      const guardEvents = eventNames(span).filter((name) => name.startsWith('toolfence.tool.'));
      expect(guardEvents.slice(0, 2)).toEqual(['toolfence.tool.started', 'toolfence.tool.fenced']);
      expect(guardEvents.at(-1)).toBe('toolfence.tool.completed');
      expect(eventNames(span)).toContain('toolfence.store.renew');
      expectSameStory(span, setup.events, fencedCall.callId);
      await expectCalls(setup.telemetry, 'reindex', 'idempotent', 'fenced', 1);
    });

    it('stale_result: the body returned but its record had been superseded', async () => {
      setup = make();
      const faulty = new FaultyStore(store());
      faulty.faults.staleComplete = true;
      const guard = setup.guard(faulty);
      const staleCall = call('refund', effectful, { orderId: SECRET });
      // EFFECTFUL: the effect happened and this call knows its value, so it gets it (rule G1).
      await expect(guard.run(staleCall, () => SECRET)).resolves.toBe(SECRET);
      const span = spanOf(setup.telemetry, staleCall.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'stale_result',
        store: 'FaultyStore',
      });
      expect(eventNames(span).slice(0, 4)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.started',
        'toolfence.store.complete',
        'toolfence.tool.stale_result',
      ]);
      expect(span.events[2]!.attributes).toMatchObject({ 'toolfence.store.status': 'stale' });
      expectSameStory(span, setup.events, staleCall.callId);
      await expectCalls(setup.telemetry, 'refund', 'effectful', 'stale_result', 1);
    });

    it('conflict: the key is held with other arguments', async () => {
      setup = make();
      const guard = setup.guard();
      const policy: IdempotencyPolicy = { ...effectful, onArgumentsMismatch: 'conflict' };
      await guard.run(call('refund', policy, { orderId: 'A-1', amount: 10 }), () => 'ok');
      const other = call('refund', policy, { orderId: 'A-1', amount: SECRET });
      await expect(guard.run(other, () => 'never')).rejects.toBeInstanceOf(IdempotencyConflictError);
      const span = spanOf(setup.telemetry, other.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'conflict',
        store: storeName,
        errorType: 'IdempotencyConflictError',
      });
      expect(eventNames(span)).toEqual(['toolfence.store.claim']);
      expect(span.events[0]!.attributes).toMatchObject({ 'toolfence.store.status': 'conflict' });
      await expectCalls(setup.telemetry, 'refund', 'effectful', 'conflict', 1, 'IdempotencyConflictError');
    });

    it('pending: a waiter gives up after waitTimeoutMs; its wait is timed', async () => {
      setup = make();
      const holder = setup.guard();
      const waiter = setup.guard();
      const entered = gate();
      const release = gate();
      const first = holder.run(call('refund', effectful, { orderId: SECRET }), async () => {
        entered.open();
        await release.wait;
        return SECRET;
      });
      await entered.wait;
      // Long enough that even a slow first claim on a loaded machine leaves time to wait.
      const impatient = call('refund', { ...effectful, waitTimeoutMs: 500 }, { orderId: SECRET });
      await expect(waiter.run(impatient, () => 'never')).rejects.toBeInstanceOf(OutcomePendingError);
      release.open();
      await first;
      const span = spanOf(setup.telemetry, impatient.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'pending',
        store: storeName,
        errorType: 'OutcomePendingError',
      });
      expect(eventNames(span).slice(0, 3)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.waiting',
        'toolfence.store.waitForSettle',
      ]);
      expect(eventNames(span).at(-1)).toBe('toolfence.tool.pending');
      expectSameStory(span, setup.events, impatient.callId);
      const points = await expectCalls(
        setup.telemetry,
        'refund',
        'effectful',
        'pending',
        1,
        'OutcomePendingError',
      );
      const [wait] = pointsOf(points, 'toolfence.guard.wait.duration', { 'toolfence.outcome': 'pending' });
      expect(wait!.sum).toBeGreaterThanOrEqual(0.25);
    });

    it('error: the store is unreachable before the body ran; each failed round trip is on the span', async () => {
      setup = make();
      const faulty = new FaultyStore(store());
      faulty.faults.claimUnreachable = true;
      const guard = setup.guard(faulty);
      const unreachable = call('refund', effectful, { orderId: SECRET });
      await expect(guard.run(unreachable, () => 'never')).rejects.toBeInstanceOf(StoreUnavailableError);
      const span = spanOf(setup.telemetry, unreachable.callId);
      expectToolSpan(span, {
        tool: 'refund',
        kind: 'effectful',
        outcome: 'error',
        store: 'FaultyStore',
        errorType: 'StoreUnavailableError',
      });
      // The claim is sent once more after a lost reply (claim-loop.ts), then reported.
      expect(eventNames(span)).toEqual(['toolfence.store.claim', 'toolfence.store.claim']);
      for (const event of span.events) expect(event.attributes).toMatchObject({ 'error.type': 'Error' });
      await expectCalls(setup.telemetry, 'refund', 'effectful', 'error', 1, 'StoreUnavailableError');
    });

    it('executed: an IDEMPOTENT body that threw releases its claim; error.type is the body error', async () => {
      setup = make();
      const guard = setup.guard();
      const failing = call('search', idempotent, { query: SECRET });
      await expect(
        guard.run(failing, () => {
          throw new TypeError(`bad ${SECRET}`);
        }),
      ).rejects.toBeInstanceOf(TypeError);
      const span = spanOf(setup.telemetry, failing.callId);
      expectToolSpan(span, {
        tool: 'search',
        kind: 'idempotent',
        outcome: 'executed',
        store: storeName,
        errorType: 'TypeError',
      });
      expect(eventNames(span)).toEqual([
        'toolfence.store.claim',
        'toolfence.tool.started',
        'toolfence.tool.failed',
        'toolfence.store.release',
      ]);
      await expectCalls(setup.telemetry, 'search', 'idempotent', 'executed', 1, 'TypeError');
    });

    it('executed: a READ_ONLY call has a span without key or store round trips', async () => {
      setup = make();
      const guard = setup.guard();
      const lookup = call('lookup', { kind: Idempotency.READ_ONLY }, { orderId: SECRET });
      await expect(guard.run(lookup, () => SECRET)).resolves.toBe(SECRET);
      const span = spanOf(setup.telemetry, lookup.callId);
      expectToolSpan(span, { tool: 'lookup', kind: 'read_only', outcome: 'executed', store: storeName });
      expect(span.attributes['toolfence.idempotency_key']).toBeUndefined();
      expect(span.events).toEqual([]);
      await expectCalls(setup.telemetry, 'lookup', 'read_only', 'executed', 1);
    });
  });
}
