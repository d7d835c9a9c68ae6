// OpenTelemetry SDK pieces for the telemetry tests: an in-memory span exporter, an in-memory
// metric reader, and a store wrapper that injects the faults some outcomes need.
import { createRequire } from 'node:module';
import type { Attributes } from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as SdkMetrics from '@opentelemetry/sdk-metrics';
import type { DataPoint, Histogram } from '@opentelemetry/sdk-metrics';
import type * as SdkTrace from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type {
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  MarkIndeterminateResult,
  RecordedError,
  RecordRef,
  ReleaseResult,
  RenewResult,
  Resolution,
  ResolutionEntry,
  ResolveResult,
  WaitOptions,
  WaitResult,
} from '@toolfence/core';

// The SDK's CommonJS builds, as an application's `require` or Node's `import` gets them: the
// "module" builds that Vite's resolver would pick import without file extensions, which Node
// cannot load. The AI SDK (loaded by Node) gets the same @opentelemetry/api instance this way.
const require = createRequire(import.meta.url);
export const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics') as typeof SdkMetrics;
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
  require('@opentelemetry/sdk-trace-base') as typeof SdkTrace;
export const { AsyncLocalStorageContextManager } =
  require('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks;

/** A metric reader that hands over what it collects when asked. */
class TestMetricReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** One metric data point, flattened for assertions. */
export interface Point {
  readonly metric: string;
  readonly unit: string;
  readonly attributes: Attributes;
  /** A sum's value, or a histogram's count. */
  readonly value: number;
  /** A histogram's sum (seconds), undefined for sums. */
  readonly sum: number | undefined;
}

/** A tracer provider and a meter provider whose output the test reads. */
export class Telemetry {
  readonly spans = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.spans)],
  });
  private readonly reader = new TestMetricReader();
  readonly meterProvider = new MeterProvider({ readers: [this.reader] });

  /** The finished spans named `execute_tool …`. */
  toolSpans(): ReadableSpan[] {
    return this.spans.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool '));
  }

  /** Every data point of the `toolfence.*` metrics. */
  async points(): Promise<Point[]> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length > 0) throw new AggregateError(errors, 'metric collection failed');
    const points: Point[] = [];
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) {
        for (const point of metric.dataPoints as DataPoint<number | Histogram>[]) {
          const histogram = typeof point.value === 'number' ? undefined : point.value;
          points.push({
            metric: metric.descriptor.name,
            unit: metric.descriptor.unit,
            attributes: point.attributes,
            value: histogram === undefined ? (point.value as number) : histogram.count,
            sum: histogram?.sum,
          });
        }
      }
    }
    return points;
  }

  async shutdown(): Promise<void> {
    await this.tracerProvider.shutdown();
    await this.meterProvider.shutdown();
  }
}

/** The names of a span's events, in order. */
export function eventNames(span: ReadableSpan): string[] {
  return span.events.map((event) => event.name);
}

/** Faults a {@link FaultyStore} injects, switched on and off by the test. */
export interface Faults {
  /** Renewals answer `lost` (stale): the holder's lease is lost while the body runs. */
  loseRenewals: boolean;
  /** `complete` answers `stale` with the record as it is: the result is not recorded. */
  staleComplete: boolean;
  /** Claims reject as an unreachable store would. */
  claimUnreachable: boolean;
}

/** Passes every operation to `inner`, except those the switched-on faults replace. */
export class FaultyStore implements IdempotencyStore {
  readonly specificationVersion = 'v1' as const;
  readonly faults: Faults = { loseRenewals: false, staleComplete: false, claimUnreachable: false };

  constructor(private readonly inner: IdempotencyStore) {}

  claim(ref: RecordRef, options: ClaimOptions): Promise<ClaimResult> {
    if (this.faults.claimUnreachable) return Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:1'));
    return this.inner.claim(ref, options);
  }
  renew(ref: RecordRef, holder: Holder, leaseMs: number): Promise<RenewResult> {
    if (this.faults.loseRenewals) return Promise.resolve({ status: 'lost', reason: 'stale' });
    return this.inner.renew(ref, holder, leaseMs);
  }
  async complete(
    ref: RecordRef,
    holder: Holder,
    outcome: string,
    retentionMs: number,
  ): Promise<CompleteResult> {
    if (!this.faults.staleComplete) return this.inner.complete(ref, holder, outcome, retentionMs);
    const record = await this.inner.get(ref);
    if (record === null) throw new Error('the record the test made stale is gone');
    return { status: 'stale', record };
  }
  release(ref: RecordRef, holder: Holder): Promise<ReleaseResult> {
    return this.inner.release(ref, holder);
  }
  markIndeterminate(
    ref: RecordRef,
    holder: Holder,
    error: RecordedError,
    retentionMs: number,
  ): Promise<MarkIndeterminateResult> {
    return this.inner.markIndeterminate(ref, holder, error, retentionMs);
  }
  get(ref: RecordRef): Promise<IdempotencyRecord | null> {
    return this.inner.get(ref);
  }
  resolve(ref: RecordRef, resolution: Resolution, retentionMs: number): Promise<ResolveResult> {
    return this.inner.resolve(ref, resolution, retentionMs);
  }
  list(options: ListOptions): Promise<ListPage> {
    return this.inner.list(options);
  }
  resolutions(ref: RecordRef): Promise<readonly ResolutionEntry[]> {
    return this.inner.resolutions(ref);
  }
  forget(options: { readonly tenant: string }): Promise<number> {
    return this.inner.forget(options);
  }
  waitForSettle(ref: RecordRef, options: WaitOptions): Promise<WaitResult> {
    return this.inner.waitForSettle(ref, options);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
