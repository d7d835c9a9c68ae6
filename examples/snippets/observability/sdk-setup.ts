// docs/observability.md, "Sending them": an OpenTelemetry SDK set up before the guard is built.
// #region sdk-setup
// telemetry.ts, imported first (node --import ./telemetry.js app.js)
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  ConsoleMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter } from '@opentelemetry/sdk-trace-base';

// Console exporters here; for a collector, OTLPTraceExporter / OTLPMetricExporter
// (@opentelemetry/exporter-{trace,metrics}-otlp-http, url http://otel-collector:4318/v1/...).
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new ConsoleSpanExporter())],
});
const meterProvider = new MeterProvider({
  readers: [
    new PeriodicExportingMetricReader({
      exporter: new ConsoleMetricExporter(),
      exportIntervalMillis: 15_000,
    }),
  ],
});
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(tracerProvider);
metrics.setGlobalMeterProvider(meterProvider);
process.on('SIGTERM', () => void Promise.all([tracerProvider.shutdown(), meterProvider.shutdown()]));
// #endregion sdk-setup
