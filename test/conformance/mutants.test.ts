// Proof that the conformance suite bites: it runs against every mutant (a store with one
// realistic bug) and must fail each of them, while the correct stores pass every case. The
// cases come from storeConformanceCases (runner-agnostic), each with a fresh store; the stores
// run at once, the cases of one store one after another.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { MemoryStore } from '@toolfence/core';
import {
  type StoreConformanceOptions,
  type StoreFactory,
  storeConformanceCases,
} from '@toolfence/core/testing';
import { expect, it } from 'vitest';
import { MapStore, type MapStoreOptions } from './mutants/map-store.js';
import { mutants } from './mutants/mutants.js';

/** The stores' clock runs an hour ahead of the worker's: a store must never mix the two. */
const SKEW_MS = 3_600_000;
const storeClock = () => Date.now() + SKEW_MS;
const options = { leaseMs: 50, raceRounds: 3, racers: 8 } satisfies StoreConformanceOptions;

interface Outcome {
  readonly name: string;
  readonly failed: { readonly name: string; readonly reason: string }[];
  readonly elapsedMs: number;
}

async function runAll(name: string, createStore: StoreFactory, createDown: StoreFactory): Promise<Outcome> {
  const started = performance.now();
  const failed: Outcome['failed'] = [];
  for (const conformanceCase of storeConformanceCases(createStore, {
    ...options,
    createUnavailableStore: createDown,
  })) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limitMs = Math.min(conformanceCase.timeoutMs, 15_000);
    try {
      await Promise.race([
        conformanceCase.run(),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`timed out after ${limitMs} ms`)), limitMs);
        }),
      ]);
    } catch (error) {
      failed.push({ name: conformanceCase.name, reason: (error as Error).message.split('\n')[0] ?? '' });
    } finally {
      clearTimeout(timer);
    }
  }
  return { name, failed, elapsedMs: performance.now() - started };
}

/** Mutants run this many at a time (beside the 3 controls): more stalls one event loop enough to blur timings. */
const CONCURRENCY = 8;

async function inPool<T>(work: (() => Promise<T>)[], size: number): Promise<T[]> {
  const results: T[] = new Array(work.length);
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const index = next++;
      results[index] = await (work[index] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: size }, worker));
  return results;
}

const mapStore = (extra: MapStoreOptions) => () => new MapStore({ clock: storeClock, ...extra });

it('the conformance suite catches every mutant store, and the correct stores pass it', async () => {
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  const started = performance.now();
  const closedMemoryStore = async () => {
    const store = new MemoryStore();
    await store.close();
    return store;
  };
  const controls = [
    runAll('MemoryStore', () => new MemoryStore(), closedMemoryStore),
    runAll(
      'MemoryStore, store clock an hour ahead',
      () => new MemoryStore({ clock: { now: storeClock } }),
      closedMemoryStore,
    ),
    runAll('MapStore without a bug', mapStore({}), mapStore({ down: true })),
  ];
  const runs = mutants.map(
    (mutant) => () =>
      runAll(mutant.bug, mapStore({ bugs: [mutant.bug] }), mapStore({ bugs: [mutant.bug], down: true })),
  );
  const [controlOutcomes, mutantOutcomes] = await Promise.all([
    Promise.all(controls),
    inPool(runs, CONCURRENCY),
  ]);
  const elapsedMs = performance.now() - started;
  lag.disable();

  const caught = mutantOutcomes.filter((outcome) => outcome.failed.length > 0);
  const lines = mutantOutcomes.map((outcome, index) => {
    const mutant = mutants[index]!;
    const by = outcome.failed.map((failure) => `      - ${failure.name}: ${failure.reason.slice(0, 160)}`);
    return [
      `  ${outcome.failed.length > 0 ? 'caught' : 'MISSED'} ${mutant.bug} (${mutant.description}), by ${outcome.failed.length} case(s):`,
      ...by,
    ].join('\n');
  });
  console.info(
    [
      `[mutants] ${caught.length} / ${mutants.length} mutants caught in ${(elapsedMs / 1000).toFixed(1)} s (event-loop delay p99 ${(lag.percentile(99) / 1e6).toFixed(0)} ms, max ${(lag.max / 1e6).toFixed(0)} ms)`,
      ...lines,
      ...controlOutcomes.map(
        (outcome) =>
          `  control ${outcome.name}: ${outcome.failed.length === 0 ? 'passes every case' : `FAILS ${outcome.failed.map((f) => `${f.name}: ${f.reason}`).join('; ')}`} (${(outcome.elapsedMs / 1000).toFixed(1)} s)`,
      ),
    ].join('\n'),
  );
  for (const outcome of controlOutcomes) expect(outcome.failed, outcome.name).toEqual([]);
  expect(
    mutantOutcomes.filter((outcome) => outcome.failed.length === 0).map((outcome) => outcome.name),
    'mutants no case caught',
  ).toEqual([]);
  // Caught for the right reason: the case meant for each bug is among those that failed.
  expect(
    mutantOutcomes.flatMap((outcome, index) =>
      outcome.failed.some((failure) => failure.name.startsWith(mutants[index]!.caughtBy))
        ? []
        : [`${outcome.name} (not by "${mutants[index]!.caughtBy}")`],
    ),
    'mutants not caught by the case meant for them',
  ).toEqual([]);
}, 120_000);
