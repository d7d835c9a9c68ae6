// docs/observability.md, "observability-opentelemetry-traces-and-m": compiled by npm run typecheck, copied there by scripts/snippets.ts --write.
import { store } from '../support.js';

// #region observability-opentelemetry-traces-and-m
import { metrics, trace } from '@opentelemetry/api';
import { Guard } from '@toolfence/core';

// After your SDK is started (below): the meter is taken once, when the guard is made.
const guard = new Guard({
  store,
  telemetry: { tracerProvider: trace.getTracerProvider(), meterProvider: metrics.getMeterProvider() },
});
// #endregion observability-opentelemetry-traces-and-m

export { guard };
