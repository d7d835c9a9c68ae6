import { metrics, trace } from '@opentelemetry/api';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { Guard, type GuardOptions, MemoryStore } from '@toolfence/core';
import { notes, type Row, row } from '../lib/report.js';
import { median } from '../lib/stats.js';
import { idempotentPolicy, outcome100, scaled, toolArguments } from '../lib/workloads.js';

/** A metric reader that keeps the aggregates in memory until collected (never, here). */
class HeldMetricReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * CPU time (user + system, µs) per operation over `iterations` sequential operations. CPU time,
 * not wall time: on a shared machine the wall clock also counts the time other processes had the
 * CPU, which here is larger than the differences measured.
 */
async function cpuMicroseconds(iterations: number, operation: () => unknown): Promise<number> {
  const started = process.cpuUsage();
  for (let index = 0; index < iterations; index++) {
    const result = operation();
    if (result instanceof Promise) await result;
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / iterations;
}

/**
 * The CPU time of `guard.run` first calls on a MemoryStore (claim, body, complete) in four set-ups, interleaved
 * round by round in one run: the body called without toolfence; the guard without the telemetry
 * option; with it, given the providers of `@opentelemetry/api` with no SDK registered (no-op
 * tracer and meter); with it, given an SDK tracer provider (simple processor, in-memory exporter)
 * and meter provider (in-memory reader). MemoryStore keeps the store's own time out of it, so
 * the ratios are the telemetry's cost over the guard's least cost.
 */
export async function telemetrySuite(): Promise<Row[]> {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const meterProvider = new MeterProvider({ readers: [new HeldMetricReader()] });
  const guardOf = (telemetry: GuardOptions['telemetry']) =>
    new Guard({ store: new MemoryStore(), ...(telemetry === undefined ? {} : { telemetry }) });
  const plain = guardOf(undefined);
  const noSdk = guardOf({
    tracerProvider: trace.getTracerProvider(),
    meterProvider: metrics.getMeterProvider(),
  });
  const sdk = guardOf({ tracerProvider, meterProvider });

  const iterations = scaled(2_000);
  const rounds = scaled(21);
  let nextId = 0;
  const body = async (id: number) => outcome100(id);
  const firstCall = (guard: Guard) => () => {
    const id = nextId++;
    return guard.run(
      { tool: 'place_order', runId: 'run-1', arguments: toolArguments(100, id), policy: idempotentPolicy },
      () => body(id),
    );
  };
  const candidates = [
    { name: 'body', samples: [] as number[], operation: () => body(nextId++) },
    { name: 'plain', samples: [] as number[], operation: firstCall(plain) },
    { name: 'noSdk', samples: [] as number[], operation: firstCall(noSdk) },
    { name: 'sdk', samples: [] as number[], operation: firstCall(sdk) },
  ];
  for (const candidate of candidates) await cpuMicroseconds(iterations, candidate.operation);
  exporter.reset();
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < candidates.length; offset++) {
      const candidate = candidates[(round + offset) % candidates.length]!;
      candidate.samples.push(await cpuMicroseconds(iterations, candidate.operation));
      // The exporter keeps every span; a bounded batch of them is what a real exporter holds.
      exporter.reset();
    }
  }
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  const [bodyUs, plainUs, noSdkUs, sdkUs] = candidates.map((candidate) => median(candidate.samples)) as [
    number,
    number,
    number,
    number,
  ];
  notes.push(
    `telemetry: per call, the API without an SDK adds ${(noSdkUs - plainUs).toFixed(2)} µs of CPU and the SDK with an in-memory exporter ${(sdkUs - plainUs).toFixed(2)} µs to a guard.run first call of ${plainUs.toFixed(2)} µs (MemoryStore); the body alone takes ${bodyUs.toFixed(2)} µs.`,
  );
  return [
    row(
      'telemetry: guard.run first call, no telemetry option (vs the body alone)',
      'µs CPU/call',
      plainUs,
      bodyUs,
    ),
    row(
      'telemetry: guard.run first call, API without an SDK (vs no telemetry option)',
      'µs CPU/call',
      noSdkUs,
      plainUs,
      '<= 1.25',
    ),
    row(
      'telemetry: guard.run first call, SDK + in-memory exporter (vs no telemetry option)',
      'µs CPU/call',
      sdkUs,
      plainUs,
      '<= 3',
    ),
    row(
      'telemetry: guard.run first call, API without an SDK (vs the body alone)',
      'µs CPU/call',
      noSdkUs,
      bodyUs,
    ),
    row(
      'telemetry: guard.run first call, SDK + in-memory exporter (vs the body alone)',
      'µs CPU/call',
      sdkUs,
      bodyUs,
    ),
  ];
}
