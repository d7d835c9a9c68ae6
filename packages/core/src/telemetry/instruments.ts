import type { Attributes, Counter, Histogram, MeterProvider, UpDownCounter } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_LATE,
  ATTR_OUTCOME,
  type GuardOutcome,
  METRIC_ACTIVE,
  METRIC_CALLS,
  METRIC_OVERHEAD,
  METRIC_WAIT,
  OVERHEAD_BUCKETS_S,
  SCOPE_NAME,
  WAIT_BUCKETS_S,
} from './names.js';

/** The metric instruments of one guard (docs/observability.md, "Metrics"). Internal. */
export class CallInstruments {
  private readonly calls: Counter;
  private readonly active: UpDownCounter;
  private readonly overhead: Histogram;
  private readonly wait: Histogram;

  constructor(meterProvider: MeterProvider) {
    const meter = meterProvider.getMeter(SCOPE_NAME);
    this.calls = meter.createCounter(METRIC_CALLS, {
      description: 'Guarded tool calls, by tool, kind and outcome.',
      unit: '{call}',
    });
    this.active = meter.createUpDownCounter(METRIC_ACTIVE, {
      description: 'Guarded tool calls in flight (not yet answered), by tool and kind.',
      unit: '{call}',
    });
    this.overhead = meter.createHistogram(METRIC_OVERHEAD, {
      description:
        "The guard's own time per call: the call's time without the body and without waiting on another holder (claim, record, key derivation, encoding).",
      unit: 's',
      advice: { explicitBucketBoundaries: OVERHEAD_BUCKETS_S },
    });
    this.wait = meter.createHistogram(METRIC_WAIT, {
      description: 'Time a call waited on another holder of its key (recorded only for calls that waited).',
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS_S },
    });
  }

  /** A call started (`base`: its tool and kind). */
  started(base: Attributes): void {
    this.active.add(1, base);
  }

  /** A call was answered. Durations in seconds. */
  record(
    base: Attributes,
    outcome: GuardOutcome,
    errorType: string | undefined,
    overheadS: number,
    waitS: number,
  ): void {
    this.active.add(-1, base);
    const attributes: Attributes = { ...base, [ATTR_OUTCOME]: outcome };
    if (errorType !== undefined) attributes[ATTR_ERROR_TYPE] = errorType;
    this.calls.add(1, attributes);
    this.overhead.record(overheadS, attributes);
    if (waitS > 0) this.wait.record(waitS, attributes);
  }

  /** An answered call's record settled later as `outcome`: one more point of the calls counter. */
  recordLate(base: Attributes, outcome: GuardOutcome, errorType: string | undefined): void {
    const attributes: Attributes = { ...base, [ATTR_OUTCOME]: outcome, [ATTR_LATE]: true };
    if (errorType !== undefined) attributes[ATTR_ERROR_TYPE] = errorType;
    this.calls.add(1, attributes);
  }
}
