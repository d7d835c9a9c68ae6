import { performance } from 'node:perf_hooks';

/** The `fraction` quantile (0..1) of `values` by nearest rank; NaN for an empty list. */
export function quantile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return sorted[rank] as number;
}

export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** What one timed batch of operations gave. */
export interface BatchResult {
  /** Latency of each operation, in milliseconds. */
  readonly latenciesMs: number[];
  /** Wall time of the whole batch, in milliseconds. */
  readonly elapsedMs: number;
}

/**
 * Runs `total` operations with `concurrency` workers, each taking the next index as soon as its
 * previous operation settled, and times every operation.
 */
export async function runBatch(
  concurrency: number,
  total: number,
  operation: (index: number) => Promise<unknown>,
): Promise<BatchResult> {
  const latenciesMs = new Array<number>(total);
  let next = 0;
  const startedMs = performance.now();
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      if (index >= total) return;
      const operationStartedMs = performance.now();
      await operation(index);
      latenciesMs[index] = performance.now() - operationStartedMs;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return { latenciesMs, elapsedMs: performance.now() - startedMs };
}

/** Per-round figures of one workload: the medians over rounds are what the report shows. */
export class RoundFigures {
  readonly p50Ms: number[] = [];
  readonly p99Ms: number[] = [];
  readonly opsPerSecond: number[] = [];

  add(batch: BatchResult): void {
    this.p50Ms.push(quantile(batch.latenciesMs, 0.5));
    this.p99Ms.push(quantile(batch.latenciesMs, 0.99));
    this.opsPerSecond.push((batch.latenciesMs.length * 1000) / batch.elapsedMs);
  }

  get p50(): number {
    return median(this.p50Ms);
  }

  get p99(): number {
    return median(this.p99Ms);
  }

  get throughput(): number {
    return median(this.opsPerSecond);
  }
}

/**
 * Runs the workloads round by round, each round in a rotated order so that no workload always
 * runs first (warm caches) or last (a tired event loop): the workloads are interleaved.
 */
export async function interleave(
  rounds: number,
  workloads: readonly { readonly figures: RoundFigures; readonly run: () => Promise<BatchResult> }[],
): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < workloads.length; offset++) {
      const workload = workloads[(round + offset) % workloads.length]!;
      workload.figures.add(await workload.run());
    }
  }
}

/**
 * Process CPU time (user + system, `process.cpuUsage`) of one synchronous or asynchronous call
 * in microseconds, over a batch of `iterations` calls; the caller interleaves candidates and takes
 * the median over rounds. CPU time, not wall time: on a shared machine the scheduler gives the
 * CPU to other processes in the middle of a batch, which wall time counts and CPU time does not.
 * It counts every thread of the process (the garbage collector's helpers too), so work moved off
 * the main thread is not hidden.
 */
export async function timeBatchMicroseconds(
  iterations: number,
  operation: (index: number) => unknown,
): Promise<number> {
  const started = process.cpuUsage();
  for (let index = 0; index < iterations; index++) {
    const result = operation(index);
    if (result instanceof Promise) await result;
  }
  const spent = process.cpuUsage(started);
  return (spent.user + spent.system) / iterations;
}
