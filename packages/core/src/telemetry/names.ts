// The names toolfence's spans, span events and metrics use (docs/observability.md). The
// `gen_ai.*` and `error.type` names are the OpenTelemetry GenAI semantic conventions' "Execute
// tool span" (status: development); the `toolfence.*` names are ours, in the conventions' style.

/** How a guarded call was answered: the value of `toolfence.outcome` (docs/observability.md). */
export type GuardOutcome =
  /** This call ran the body (its value or its error is the answer). */
  | 'executed'
  /** The recorded outcome of an earlier call was returned without waiting. */
  | 'replayed'
  /** Another holder's outcome was returned after waiting for it (in the store or in this process). */
  | 'waited'
  /** An EFFECTFUL call's outcome is unknown (`IndeterminateOutcomeError`): its record needs a decision. */
  | 'indeterminate'
  /**
   * An EFFECTFUL caller was answered (`IndeterminateOutcomeError`, its timeout or abort) before
   * the body settled: nothing to decide yet.
   */
  | 'interrupted'
  /**
   * The call's outcome was unknown and the policy's reconcile probe settled it: the call returned
   * the outcome the probe found, or ran its body once more after the probe vouched nothing happened.
   */
  | 'reconciled'
  /** An IDEMPOTENT call lost `maxAttempts` holders (`ExecutionAbandonedError`). */
  | 'abandoned'
  /** This call's attempt lost its lease while the body ran. */
  | 'fenced'
  /** The body returned but its record had been superseded: its value was not recorded there. */
  | 'stale_result'
  /** The key is held with other arguments or by another tool (`IdempotencyConflictError`). */
  | 'conflict'
  /** Another caller still ran it past `waitTimeoutMs` (`OutcomePendingError`). */
  | 'pending'
  /** The call waits for an operator's approval (`ApprovalRequiredError`): nothing ran. */
  | 'approval_required'
  /** An operator denied the call (`ApprovalDeniedError`): nothing ran. */
  | 'denied'
  /** The guard failed before any of the above: the store unreachable before the body ran, a key that cannot be derived, the caller's abort. */
  | 'error';

/** Instrumentation scope of the tracer and the meter. */
export const SCOPE_NAME = '@toolfence/core';

export const ATTR_GEN_AI_OPERATION_NAME = 'gen_ai.operation.name';
export const ATTR_GEN_AI_TOOL_NAME = 'gen_ai.tool.name';
export const ATTR_GEN_AI_TOOL_CALL_ID = 'gen_ai.tool.call.id';
export const ATTR_GEN_AI_CONVERSATION_ID = 'gen_ai.conversation.id';
export const ATTR_ERROR_TYPE = 'error.type';
export const GEN_AI_OPERATION_EXECUTE_TOOL = 'execute_tool';

export const ATTR_KIND = 'toolfence.kind';
export const ATTR_OUTCOME = 'toolfence.outcome';
/** On a metric point counted after its call was answered (an interrupted call's record left indeterminate). */
export const ATTR_LATE = 'toolfence.late';
export const ATTR_IDEMPOTENCY_KEY = 'toolfence.idempotency_key';
export const ATTR_TENANT = 'toolfence.tenant';
export const ATTR_ATTEMPT = 'toolfence.attempt';
export const ATTR_FENCE = 'toolfence.fence';
export const ATTR_TAKEOVER = 'toolfence.takeover';
export const ATTR_RECORDED = 'toolfence.recorded';
export const ATTR_ARGUMENTS_DIFFER = 'toolfence.arguments_differ';
/** The reconcile probe's verdict (`happened`, `not_happened`, `unknown`, `failed`…), on the span and its event. */
export const ATTR_RECONCILE_VERDICT = 'toolfence.reconcile.verdict';
/** What the store answered to the verdict's resolution (`resolved`, `changed`, `holder_alive`…). */
export const ATTR_RECONCILE_APPLIED = 'toolfence.reconcile.applied';
export const ATTR_BODY_DURATION = 'toolfence.body.duration';
export const ATTR_STORE_NAME = 'toolfence.store.name';
export const ATTR_STORE_OPERATION = 'toolfence.store.operation';
export const ATTR_STORE_STATUS = 'toolfence.store.status';
export const ATTR_STORE_DURATION = 'toolfence.store.duration';

/** Span event names: `toolfence.<guard event type>` (e.g. `toolfence.tool.started`) and these. */
export const EVENT_PREFIX = 'toolfence.';
export const STORE_EVENT_PREFIX = 'toolfence.store.';

export const METRIC_CALLS = 'toolfence.guard.calls';
export const METRIC_ACTIVE = 'toolfence.guard.call.active';
export const METRIC_OVERHEAD = 'toolfence.guard.overhead.duration';
export const METRIC_WAIT = 'toolfence.guard.wait.duration';

/**
 * Bucket boundaries (seconds) of the overhead histogram: a memory store's claim is tens of
 * microseconds, a remote one's a millisecond or more; the SDK's default buckets (0 to 10,000)
 * would put every call in the first one.
 */
export const OVERHEAD_BUCKETS_S = [
  0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
  0.5, 1, 2.5,
];

/** Bucket boundaries (seconds) of the wait histogram: waits last as long as another holder's body. */
export const WAIT_BUCKETS_S = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
];
