import { randomUUID } from 'node:crypto';
import type { Guard } from '@toolfence/core';
import { type Row, row } from './report.js';
import { interleave, RoundFigures, runBatch } from './stats.js';
import { idempotentPolicy, outcome100, scaled, toolArguments } from './workloads.js';

/** What a store benchmark needs to know about its store. */
export interface StoreLatencySpec {
  /** `redis` or `postgres`: the start of every row name. */
  readonly label: string;
  readonly guard: Guard;
  /** One round trip of the cheapest kind on the same connection(s): PING, `SELECT 1`. */
  readonly oneRoundTrip: () => Promise<unknown>;
  readonly roundTripName: string;
  /** Counts the round trips `work` causes (server-side where possible), and the server time. */
  readonly countRoundTrips: (
    work: () => Promise<void>,
  ) => Promise<{ roundTrips: number; serverMicroseconds: number }>;
  readonly firstCallTarget: string;
  readonly repeatTarget: string | null;
  /** Calls per round at concurrency 1 and 32, and rounds (before BENCH_SCALE). */
  readonly sizes?: { readonly sequential: number; readonly concurrent: number; readonly rounds: number };
}

/** A first call and a repeat through a guard, each on its own ids. */
export function guardedCalls(guard: Guard) {
  const runId = `bench-${randomUUID()}`;
  const call = (id: number) =>
    guard.run(
      { tool: 'place_order', runId, arguments: toolArguments(100, id), policy: idempotentPolicy },
      () => outcome100(id),
    );
  const repeatPool = 1_000;
  let nextFirst = repeatPool;
  return {
    /** Completes the calls the repeats replay. */
    async prepare(): Promise<void> {
      await runBatch(32, repeatPool, (id) => call(id));
    },
    first: () => call(nextFirst++),
    repeat: (index: number) => call(index % repeatPool),
  };
}

/**
 * p50 and p99 of a guarded first call and of a repeat at concurrency 1 and 32, interleaved with
 * one and two sequential round trips of the baseline on the same client; then round trips per
 * call.
 */
export async function storeLatencyRows(spec: StoreLatencySpec): Promise<Row[]> {
  const calls = guardedCalls(spec.guard);
  await calls.prepare();
  const rows: Row[] = [];
  const sizes = spec.sizes ?? { sequential: 300, concurrent: 3_000, rounds: 7 };
  const rounds = scaled(sizes.rounds);
  for (const concurrency of [1, 32]) {
    const total = scaled(concurrency === 1 ? sizes.sequential : sizes.concurrent);
    const one = new RoundFigures();
    const two = new RoundFigures();
    const first = new RoundFigures();
    const repeat = new RoundFigures();
    // Warm-up round, not recorded.
    await runBatch(concurrency, total, () => calls.first());
    await runBatch(concurrency, total, (index) => calls.repeat(index));
    await interleave(rounds, [
      { figures: one, run: () => runBatch(concurrency, total, () => spec.oneRoundTrip()) },
      {
        figures: two,
        run: () =>
          runBatch(concurrency, total, async () => {
            await spec.oneRoundTrip();
            await spec.oneRoundTrip();
          }),
      },
      { figures: first, run: () => runBatch(concurrency, total, () => calls.first()) },
      { figures: repeat, run: () => runBatch(concurrency, total, (index) => calls.repeat(index)) },
    ]);
    const name = spec.roundTripName;
    rows.push(
      row(
        `${spec.label}: first call p50, c=${concurrency} (vs 2×${name})`,
        'ms',
        first.p50,
        two.p50,
        spec.firstCallTarget,
      ),
      row(`${spec.label}: first call p99, c=${concurrency} (vs 2×${name})`, 'ms', first.p99, two.p99),
      row(
        `${spec.label}: repeat p50, c=${concurrency} (vs ${name})`,
        'ms',
        repeat.p50,
        one.p50,
        spec.repeatTarget,
      ),
      row(`${spec.label}: repeat p99, c=${concurrency} (vs ${name})`, 'ms', repeat.p99, one.p99),
    );
    if (concurrency === 32) {
      rows.push(
        row(
          `${spec.label}: first call throughput, c=32 (vs 2×${name})`,
          'calls/s',
          first.throughput,
          two.throughput,
        ),
        row(
          `${spec.label}: repeat throughput, c=32 (vs ${name})`,
          'calls/s',
          repeat.throughput,
          one.throughput,
        ),
      );
    }
  }
  const countedCalls = 50;
  const firstCounted = await spec.countRoundTrips(async () => {
    for (let index = 0; index < countedCalls; index++) await calls.first();
  });
  const repeatCounted = await spec.countRoundTrips(async () => {
    for (let index = 0; index < countedCalls; index++) await calls.repeat(index);
  });
  rows.push(
    row(
      `${spec.label}: round trips per first call`,
      'round trips',
      firstCounted.roundTrips / countedCalls,
      null,
      '<= 2',
    ),
    row(
      `${spec.label}: round trips per repeat`,
      'round trips',
      repeatCounted.roundTrips / countedCalls,
      null,
      '<= 1',
    ),
  );
  if (!Number.isNaN(firstCounted.serverMicroseconds)) {
    const baseline = await spec.countRoundTrips(async () => {
      for (let index = 0; index < countedCalls; index++) await spec.oneRoundTrip();
    });
    const perBaseline = baseline.serverMicroseconds / countedCalls;
    rows.push(
      row(
        `${spec.label}: server time per first call (vs 2×${spec.roundTripName})`,
        'µs',
        firstCounted.serverMicroseconds / countedCalls,
        Number.isNaN(perBaseline) ? null : 2 * perBaseline,
      ),
      row(
        `${spec.label}: server time per repeat (vs ${spec.roundTripName})`,
        'µs',
        repeatCounted.serverMicroseconds / countedCalls,
        Number.isNaN(perBaseline) ? null : perBaseline,
      ),
    );
  }
  return rows;
}
