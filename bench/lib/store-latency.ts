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
  /**
   * What a first call and a repeat are compared with, on the same connection(s), same concurrency,
   * same rounds: e.g. two PINGs and one PING, or the durable work a first call cannot avoid (two
   * single-row autocommit INSERTs) and one primary-key SELECT. `run` gets the operation's index
   * within the batch and the batch's number (fresh keys for every insert).
   */
  readonly baselines: { readonly first: Baseline; readonly repeat: Baseline };
  /** Counts the round trips `work` causes (server-side where possible), and the server time. */
  readonly countRoundTrips: (
    work: () => Promise<void>,
  ) => Promise<{ roundTrips: number; serverMicroseconds: number }>;
  readonly firstCallTarget: string | null;
  readonly repeatTarget: string | null;
  /** The cheapest command (PING) whose server time is shown beside the calls'; none: no such rows. */
  readonly serverTimeBaseline?: Baseline;
  /** Calls per round at concurrency 1 and 32, and rounds (before BENCH_SCALE). */
  readonly sizes?: { readonly sequential: number; readonly concurrent: number; readonly rounds: number };
}

/** One baseline workload. */
export interface Baseline {
  /** As the row names show it: `2×PING`, `2×INSERT ON CONFLICT DO NOTHING`. */
  readonly name: string;
  readonly run: (index: number) => Promise<unknown>;
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
    const { first: firstBaseline, repeat: repeatBaseline } = spec.baselines;
    const first = new RoundFigures();
    const repeat = new RoundFigures();
    // Warm-up round, not recorded.
    await runBatch(concurrency, total, () => calls.first());
    await runBatch(concurrency, total, (index) => calls.repeat(index));
    await interleave(rounds, [
      { figures: one, run: () => runBatch(concurrency, total, repeatBaseline.run) },
      { figures: two, run: () => runBatch(concurrency, total, firstBaseline.run) },
      { figures: first, run: () => runBatch(concurrency, total, () => calls.first()) },
      { figures: repeat, run: () => runBatch(concurrency, total, (index) => calls.repeat(index)) },
    ]);
    const firstName = firstBaseline.name;
    const repeatName = repeatBaseline.name;
    rows.push(
      row(
        `${spec.label}: first call p50, c=${concurrency} (vs ${firstName})`,
        'ms',
        first.p50,
        two.p50,
        spec.firstCallTarget,
      ),
      row(`${spec.label}: first call p99, c=${concurrency} (vs ${firstName})`, 'ms', first.p99, two.p99),
      row(
        `${spec.label}: repeat p50, c=${concurrency} (vs ${repeatName})`,
        'ms',
        repeat.p50,
        one.p50,
        spec.repeatTarget,
      ),
      row(`${spec.label}: repeat p99, c=${concurrency} (vs ${repeatName})`, 'ms', repeat.p99, one.p99),
    );
    if (concurrency === 32) {
      rows.push(
        row(
          `${spec.label}: first call throughput, c=32 (vs ${firstName})`,
          'calls/s',
          first.throughput,
          two.throughput,
        ),
        row(
          `${spec.label}: repeat throughput, c=32 (vs ${repeatName})`,
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
  const serverTimeBaseline = spec.serverTimeBaseline;
  if (!Number.isNaN(firstCounted.serverMicroseconds) && serverTimeBaseline !== undefined) {
    const baseline = await spec.countRoundTrips(async () => {
      for (let index = 0; index < countedCalls; index++) await serverTimeBaseline.run(index);
    });
    const perBaseline = baseline.serverMicroseconds / countedCalls;
    rows.push(
      row(
        `${spec.label}: server time per first call (vs 2×${serverTimeBaseline.name})`,
        'µs',
        firstCounted.serverMicroseconds / countedCalls,
        Number.isNaN(perBaseline) ? null : 2 * perBaseline,
      ),
      row(
        `${spec.label}: server time per repeat (vs ${serverTimeBaseline.name})`,
        'µs',
        repeatCounted.serverMicroseconds / countedCalls,
        Number.isNaN(perBaseline) ? null : perBaseline,
      ),
    );
  }
  return rows;
}
