import type { Attributes, MeterProvider, Span, SpanKind, Tracer, TracerProvider } from '@opentelemetry/api';
import { PolicyError } from '../errors/policy-error.js';
import type { Body, GuardedCall } from '../guard/guard-types.js';
import type { IdempotencyKind } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import { CallTrace, quietly } from './call-trace.js';
import { CallInstruments } from './instruments.js';
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_KIND,
  ATTR_STORE_NAME,
  GEN_AI_OPERATION_EXECUTE_TOOL,
  SCOPE_NAME,
} from './names.js';
import { runTraced, TracedStore } from './traced-store.js';

/**
 * OpenTelemetry for a {@link Guard} (docs/observability.md). Pass the providers of the
 * `@opentelemetry/api` you use (an optional peer dependency: toolfence loads nothing of it and
 * only calls what you pass), e.g. `{ tracerProvider: trace.getTracerProvider(), meterProvider:
 * metrics.getMeterProvider() }` after your SDK is registered: the meter is taken once, when the
 * guard is made.
 */
export interface TelemetryOptions {
  /** Traces every guarded call as an `execute_tool {tool}` span, under the span active at the call. */
  readonly tracerProvider?: TracerProvider;
  /** Counts guarded calls and times the guard's overhead and its waits. */
  readonly meterProvider?: MeterProvider;
}

/** `SpanKind.INTERNAL` of `@opentelemetry/api`, without loading it. */
const SPAN_KIND_INTERNAL = 0 as SpanKind;

/**
 * The telemetry of one guard: its tracer and instruments, and the wrapper that times its store.
 * Internal; made only when the `telemetry` option is set.
 */
export class Telemetry {
  private readonly tracer: Tracer | undefined;
  private readonly instruments: CallInstruments | undefined;
  private readonly storeName: string;

  private constructor(options: TelemetryOptions, store: IdempotencyStore) {
    this.tracer = options.tracerProvider?.getTracer(SCOPE_NAME);
    this.instruments =
      options.meterProvider === undefined ? undefined : new CallInstruments(options.meterProvider);
    this.storeName = storeNameOf(store);
  }

  /**
   * The guard's telemetry, or undefined when the option is absent.
   * @throws PolicyError when `telemetry` is not an object with a tracer provider, a meter provider or both
   */
  static of(options: TelemetryOptions | undefined, store: IdempotencyStore): Telemetry | undefined {
    if (options === undefined) return undefined;
    const problem = telemetryProblem(options);
    if (problem !== undefined) throw new PolicyError('telemetry', problem);
    return new Telemetry(options, store);
  }

  /** The store the guard's calls use: each round trip is timed on the call that makes it. */
  traceStore(store: IdempotencyStore): IdempotencyStore {
    return new TracedStore(store);
  }

  /**
   * Run one guarded call in its span (active while it runs, so the body's own spans nest under
   * it), with its metric points. Telemetry never changes the call's answer.
   */
  run<T>(
    call: GuardedCall,
    kind: IdempotencyKind,
    body: Body<T>,
    guarded: (body: Body<T>, trace: CallTrace | undefined) => Promise<T>,
  ): Promise<T> {
    const base: Attributes = { [ATTR_GEN_AI_TOOL_NAME]: call.tool, [ATTR_KIND]: kind };
    const tracer = this.tracer;
    if (tracer === undefined) return this.traced(undefined, base, body, guarded);
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
      ...base,
      [ATTR_STORE_NAME]: this.storeName,
    };
    if (typeof call.callId === 'string') attributes[ATTR_GEN_AI_TOOL_CALL_ID] = call.callId;
    if (typeof call.runId === 'string') attributes[ATTR_GEN_AI_CONVERSATION_ID] = call.runId;
    let running: Promise<T> | undefined;
    try {
      return tracer.startActiveSpan(
        `${GEN_AI_OPERATION_EXECUTE_TOOL} ${call.tool}`,
        { kind: SPAN_KIND_INTERNAL, attributes },
        (span) => {
          running = this.traced(span, base, body, guarded);
          return running;
        },
      );
    } catch {
      // A tracer that throws: the call runs (or goes on running) without its span.
      return running ?? this.traced(undefined, base, body, guarded);
    }
  }

  private async traced<T>(
    span: Span | undefined,
    base: Attributes,
    body: Body<T>,
    guarded: (body: Body<T>, trace: CallTrace | undefined) => Promise<T>,
  ): Promise<T> {
    const recording = isRecording(span) ? span : undefined;
    // A no-op span and no meter: nothing to measure, the call runs as without the option.
    if (recording === undefined && this.instruments === undefined) {
      try {
        return await guarded(body, undefined);
      } finally {
        quietly(() => span?.end());
      }
    }
    const trace = new CallTrace(recording, this.instruments, base);
    quietly(() => this.instruments?.started(base));
    try {
      const timedBody = trace.timeBody(body);
      const value = await (trace.timed
        ? runTraced(trace, () => guarded(timedBody, trace))
        : guarded(timedBody, trace));
      quietly(() => trace.finish(false, undefined));
      return value;
    } catch (error) {
      quietly(() => trace.finish(true, error));
      throw error;
    } finally {
      quietly(() => span?.end());
    }
  }
}

/** A span worth building attributes for (a sampled-out or no-op span is not). */
function isRecording(span: Span | undefined): span is Span {
  try {
    return span?.isRecording() === true;
  } catch {
    return false;
  }
}

function telemetryProblem(options: TelemetryOptions): string | undefined {
  if (options === null || typeof options !== 'object') {
    return 'must be an object { tracerProvider?, meterProvider? }';
  }
  const { tracerProvider, meterProvider } = options;
  if (tracerProvider === undefined && meterProvider === undefined) {
    return 'needs a tracerProvider, a meterProvider or both (an empty object would trace nothing)';
  }
  if (tracerProvider !== undefined && typeof tracerProvider?.getTracer !== 'function') {
    return 'tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)';
  }
  if (meterProvider !== undefined && typeof meterProvider?.getMeter !== 'function') {
    return 'meterProvider must be an OpenTelemetry MeterProvider (with getMeter)';
  }
  return undefined;
}

/** `toolfence.store.name`: the store's class (MemoryStore, RedisStore, PostgresStore, SQLiteStore). */
function storeNameOf(store: IdempotencyStore): string {
  const name: unknown = (store as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : 'IdempotencyStore';
}
