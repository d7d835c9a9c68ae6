// Reconcile in the telemetry (docs/observability.md, docs/reconcile.md): a call whose unknown
// outcome the probe settled is `reconciled`, its span carries the verdict, and a verdict that
// settles nothing leaves the call `indeterminate` with the verdict on its span.
import { randomUUID } from 'node:crypto';
import {
  Guard,
  Idempotency,
  type IdempotencyPolicy,
  IndeterminateOutcomeError,
  MemoryStore,
  type ReconcileVerdict,
} from '@toolfence/core';
import { afterEach, describe, expect, it } from 'vitest';
import { eventNames, Telemetry } from './harness.js';

const SECRET = 'secret-4711';
const store = new MemoryStore();
let telemetry: Telemetry;

afterEach(async () => {
  await telemetry?.shutdown();
});

function guardWith(): Guard {
  telemetry = new Telemetry();
  return new Guard({
    store,
    tenant: `otel-rc-${randomUUID()}`,
    telemetry: { tracerProvider: telemetry.tracerProvider, meterProvider: telemetry.meterProvider },
  });
}

async function runLostReply(guard: Guard, verdict: ReconcileVerdict) {
  const policy: IdempotencyPolicy = { kind: Idempotency.EFFECTFUL, reconcile: () => verdict };
  const callId = randomUUID();
  const answer = await guard
    .run({ tool: 'charge', arguments: { card: SECRET }, runId: 'r', callId, policy }, () => {
      throw Object.assign(new Error(`charge of ${SECRET}: reply lost`), { code: 'ETIMEDOUT' });
    })
    .then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
  const spans = telemetry.toolSpans().filter((span) => span.attributes['gen_ai.tool.call.id'] === callId);
  expect(spans).toHaveLength(1);
  return { answer, span: spans[0]! };
}

describe('telemetry of reconcile (MemoryStore)', () => {
  it('reconciled: the probe found the effect; the span says so, the metric counts it, nothing secret', async () => {
    const guard = guardWith();
    const { answer, span } = await runLostReply(guard, { happened: true, outcome: { chargeId: 'ch_1' } });
    expect(answer).toEqual({ ok: true, value: { chargeId: 'ch_1' } });
    expect(span.attributes['toolfence.outcome']).toBe('reconciled');
    expect(span.attributes['toolfence.reconcile.verdict']).toBe('happened');
    expect(span.attributes['toolfence.reconcile.applied']).toBe('resolved');
    expect(span.status.code).toBe(0);
    const names = eventNames(span).filter((name) => name.startsWith('toolfence.tool.'));
    expect(names).toEqual([
      'toolfence.tool.started',
      'toolfence.tool.indeterminate',
      'toolfence.tool.reconciled',
    ]);
    const reconciled = span.events.find((event) => event.name === 'toolfence.tool.reconciled');
    expect(reconciled?.attributes).toMatchObject({
      'toolfence.reconcile.verdict': 'happened',
      'toolfence.reconcile.applied': 'resolved',
    });
    // The probe's store round trips are the call's too: the record read, the probe's lease claimed,
    // the record read again by the conditional resolution, the lease released.
    expect(eventNames(span)).toEqual([
      'toolfence.store.claim',
      'toolfence.tool.started',
      'toolfence.store.markIndeterminate',
      'toolfence.tool.indeterminate',
      'toolfence.store.get',
      'toolfence.store.claim',
      'toolfence.store.get',
      'toolfence.store.release',
      'toolfence.tool.reconciled',
    ]);
    const points = await telemetry.points();
    const calls = points.filter(
      (point) =>
        point.metric === 'toolfence.guard.calls' && point.attributes['toolfence.outcome'] === 'reconciled',
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.value).toBe(1);
    expect(JSON.stringify({ attributes: span.attributes, events: span.events, points })).not.toContain(
      SECRET,
    );
  });

  it('unknown: the call stays indeterminate, with the verdict on its span', async () => {
    const guard = guardWith();
    const { answer, span } = await runLostReply(guard, { unknown: true });
    expect(answer.ok).toBe(false);
    expect(IndeterminateOutcomeError.isInstance((answer as { error: unknown }).error)).toBe(true);
    expect(span.attributes['toolfence.outcome']).toBe('indeterminate');
    expect(span.attributes['toolfence.reconcile.verdict']).toBe('unknown');
    expect(span.attributes['toolfence.reconcile.applied']).toBeUndefined();
    const points = await telemetry.points();
    const outcomes = points
      .filter((point) => point.metric === 'toolfence.guard.calls')
      .map((point) => point.attributes['toolfence.outcome']);
    expect(outcomes).toEqual(['indeterminate']);
  });
});
