import { Guard, type IdempotencyStore, idempotencyKey, MemoryStore } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { curve, kneeOf } from '../lib/curves.js';
import { type Row, row } from '../lib/report.js';
import { connectPostgres, connectRedis, deleteRedisPrefix, randomName } from '../lib/services.js';
import { median, quantile, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { scaled, toolArguments } from '../lib/workloads.js';
import { durableBaselines, postgresPoolSize, throwawayPostgresStore } from './postgres.js';
import { bareDesign } from './redis.js';
import { sqliteFirstCallBaseline, temporarySqliteStore } from './sqlite.js';

/** Concurrency levels of the curve (workers, each starting its next call when the previous settles). */
export const concurrencyLevels = [1, 2, 4, 8, 16, 32, 64, 128, 256];

interface Workloads {
  readonly label: string;
  readonly guard: Guard;
  /** Calls per batch at concurrency 1 (before BENCH_SCALE); at least 8 per worker at higher levels. */
  readonly calls: number;
  /** The first call's floor on the same store (see the suite of the store), if it has one. */
  readonly baseline?: { readonly name: string; readonly run: (index: number) => Promise<unknown> };
}

/**
 * Throughput and p99 of first calls and repeats against concurrency 1 → 256 on one store, with
 * the first call's baseline beside them. Each point: the median of 3 batches, the workloads
 * interleaved at each level.
 */
async function concurrencyCurve(workloads: Workloads): Promise<Row[]> {
  const { label } = workloads;
  const calls = guardedCalls(workloads.guard);
  await calls.prepare();
  const throughput = curve({
    id: `concurrency-throughput-${label}`,
    title: `${label}: throughput against concurrency`,
    xTitle: 'concurrency (workers)',
    yTitle: 'calls/s',
    xLog: true,
    yLog: false,
  });
  const p99 = curve({
    id: `concurrency-p99-${label}`,
    title: `${label}: p99 latency against concurrency`,
    xTitle: 'concurrency (workers)',
    yTitle: 'p99 latency (ms)',
    xLog: true,
    yLog: true,
  });
  const series = [
    { name: 'first call', run: () => calls.first() },
    { name: 'repeat', run: (index: number) => calls.repeat(index) },
    ...(workloads.baseline === undefined
      ? []
      : [{ name: `baseline: ${workloads.baseline.name}`, run: workloads.baseline.run }]),
  ];
  for (const concurrency of concurrencyLevels) {
    const total = Math.max(scaled(workloads.calls), 8 * concurrency);
    const samples = new Map(
      series.map((entry) => [entry.name, { rate: [] as number[], p99: [] as number[] }]),
    );
    for (let round = 0; round < 3; round++) {
      for (let offset = 0; offset < series.length; offset++) {
        const entry = series[(round + offset) % series.length]!;
        const batch = await runBatch(concurrency, total, entry.run);
        samples.get(entry.name)!.rate.push((total * 1000) / batch.elapsedMs);
        samples.get(entry.name)!.p99.push(quantile(batch.latenciesMs, 0.99));
      }
    }
    for (const [name, figures] of samples) {
      throughput.points.push({ series: name, x: concurrency, y: median(figures.rate) });
      p99.points.push({ series: name, x: concurrency, y: median(figures.p99) });
    }
  }
  const rows: Row[] = [];
  for (const name of ['first call', 'repeat']) {
    const points = throughput.points.filter((point) => point.series === name);
    const knee = kneeOf(points);
    const baselinePoints = throughput.points.filter((point) => point.series.startsWith('baseline'));
    const baselinePeak = baselinePoints.length === 0 ? null : kneeOf(baselinePoints).peak;
    rows.push(
      row(
        `curve: ${label} ${name}, peak throughput over c=1..256${name === 'first call' && baselinePeak !== null ? ` (vs ${workloads.baseline!.name})` : ''}`,
        'calls/s',
        knee.peak,
        name === 'first call' ? baselinePeak : null,
      ),
      row(`curve: ${label} ${name}, concurrency reaching 90 % of peak throughput`, 'workers', knee.x),
    );
  }
  return rows;
}

export async function curveConcurrencyMemorySuite(): Promise<Row[]> {
  const store: IdempotencyStore = new MemoryStore();
  return concurrencyCurve({
    label: 'memory',
    guard: new Guard({ store }),
    calls: 4_000,
    baseline: {
      name: 'idempotencyKey alone',
      run: async (index) =>
        idempotencyKey({
          tenant: 'default',
          runId: 'run-1',
          tool: 'place_order',
          arguments: toolArguments(100, index),
        }),
    },
  });
}

export async function curveConcurrencyRedisSuite(): Promise<Row[]> {
  const client = await connectRedis();
  const prefix = randomName('curve');
  const store = new RedisStore({ client, prefix });
  try {
    const bare = bareDesign(client, prefix);
    return await concurrencyCurve({
      label: 'redis',
      guard: new Guard({ store }),
      calls: 1_000,
      baseline: { name: 'bare SET NX + SET XX', run: () => bare.first() },
    });
  } finally {
    await store.close();
    await deleteRedisPrefix(client, prefix);
    client.disconnect();
  }
}

export async function curveConcurrencyPostgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const { store, schema, drop } = await throwawayPostgresStore(pool, 'curve');
  try {
    const baselines = await durableBaselines(pool, schema);
    return await concurrencyCurve({
      label: 'postgres',
      guard: new Guard({ store }),
      calls: 200,
      baseline: { name: '2×INSERT ON CONFLICT DO NOTHING', run: baselines.twoInserts },
    });
  } finally {
    await drop();
    await pool.end();
  }
}

export async function curveConcurrencySqliteSuite(): Promise<Row[]> {
  const { store, path, remove } = temporarySqliteStore('full');
  await store.ensureSchema();
  const baseline = sqliteFirstCallBaseline(path, 'full');
  try {
    return await concurrencyCurve({
      label: 'sqlite',
      guard: new Guard({ store }),
      calls: 200,
      baseline: { name: '2×INSERT ON CONFLICT DO NOTHING', run: baseline.run },
    });
  } finally {
    baseline.close();
    await remove();
  }
}
