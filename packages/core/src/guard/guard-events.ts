/** Event types, one per thing that can happen to a guarded call. */
export type GuardEventType =
  | 'tool.started'
  | 'tool.completed'
  | 'tool.failed'
  | 'tool.deduplicated'
  | 'tool.waiting'
  | 'tool.pending'
  | 'tool.indeterminate'
  /**
   * An EFFECTFUL caller was answered (`IndeterminateOutcomeError`, rule G4: its timeout or its
   * abort) before the body settled; the claim is held until it does. Not a record that needs a
   * decision: a body that then returns completes the record (a retry replays it); one that fails,
   * or is still running `waitTimeoutMs` later, leaves it indeterminate (`tool.indeterminate`
   * then).
   */
  | 'tool.interrupted'
  | 'tool.abandoned'
  | 'tool.fenced'
  | 'tool.stale_result'
  /** An operator settled an indeterminate or abandoned record (`guard.resolve`, `toolfence resolve`). */
  | 'tool.resolved'
  /** The call needs an operator's approval and has none: nothing ran (`ApprovalRequiredError`). */
  | 'tool.approval_required'
  /** This call's claim consumed an operator's approval (`approval` says whose); the body runs once. */
  | 'tool.approval_consumed'
  /** An operator denied this call: nothing ran (`ApprovalDeniedError`). */
  | 'tool.denied'
  /** An operator decided on a call (`guard.approve` / `guard.deny`): `approval` says what and who. */
  | 'tool.approval_decided'
  /**
   * The policy's reconcile probe was asked about a record whose outcome is unknown (by the stopped
   * call, in the background after an interrupted call, or by an operator): `reconcile` says what it
   * answered and, when the verdict was applied, what the store answered (docs/reconcile.md).
   */
  | 'tool.reconciled';

/** One event of a guarded call. */
export interface GuardEvent {
  readonly type: GuardEventType;
  readonly key: string;
  readonly tool: string;
  readonly tenant: string;
  readonly runId: string | undefined;
  readonly callId: string | undefined;
  /** Attempt of the record when the event happened (0 when no attempt is known). */
  readonly attempt: number;
  /** Fencing token of the record when the event happened (0 when none is known). */
  readonly fence: number;
  /** Wall-clock time of the event, epoch milliseconds (the worker's clock). */
  readonly timeMs: number;
  /** Time the body ran, for `tool.completed` / `tool.failed` / `tool.indeterminate`. */
  readonly durationMs?: number;
  /**
   * The error, for `tool.failed`, `tool.indeterminate`, `tool.abandoned`, `tool.fenced`, and
   * `tool.pending` (a waiter gave up after `waitTimeoutMs`: the outcome is pending, not failed).
   * A body's error is recorded as the store records it: its type and code, the message
   * `(message not recorded)` unless `GuardOptions.describeError` gives one.
   */
  readonly error?: { readonly type: string; readonly message: string };
  /** For `tool.completed`: false when the result could not be recorded (store unreachable). */
  readonly recorded?: boolean;
  /**
   * For `tool.deduplicated`: true when the repeat's arguments outside `keyArguments` differ from
   * those of the call that recorded the outcome (it still gets that outcome; choose
   * `onArgumentsMismatch: 'conflict'` to refuse it instead). Absent otherwise.
   */
  readonly argumentsDiffer?: boolean;
  /** For `tool.started`: true when this attempt took over from a lost holder. */
  readonly takeover?: boolean;
  /**
   * For `tool.resolved`: what the operator decided (`completed`: it happened, with an outcome;
   * `released`: it did not, the call may run again), who, and why. The outcome is not in it.
   */
  readonly resolution?: {
    readonly action: 'completed' | 'released';
    /** How long the settled record and its resolution entry are kept (ms). */
    readonly retentionMs?: number;
    /**
     * Whose retention that is: the operator's own, the one the call was claimed with (the
     * default), or the guard's default (a store that does not report the call's).
     */
    readonly retentionFrom?: 'operator' | 'call' | 'guard';
    /** True when the operator forced the decision over a live holder. */
    readonly forced?: boolean;
    readonly by?: string;
    readonly reason?: string;
  };
  /**
   * For `tool.approval_consumed`, `tool.denied` and `tool.approval_decided`: the operator's
   * decision (`approved`), who, and why, as the record keeps it.
   */
  readonly approval?: {
    readonly approved: boolean;
    readonly by?: string;
    readonly reason?: string;
  };
  /** For `tool.reconciled`: what the probe answered. */
  readonly reconcile?: ReconcileEventDetails;
}

/**
 * What a reconcile probe answered (`tool.reconciled`): never its outcome, never the arguments.
 * `verdict`: `happened`, `not_happened`, `unknown`, `failed` (every try threw), `timeout` (the
 * last try ran past `timeoutMs`), `aborted`, `lease_lost`, or `busy` (another worker is probing).
 */
export interface ReconcileEventDetails {
  readonly verdict: string;
  /** Tries made, 0 when `busy`. */
  readonly tries: number;
  /**
   * When the verdict was applied: `resolved`, or why nothing was written (`changed`, `not_found`,
   * `not_resolvable`, `holder_alive`, `unencodable`).
   */
  readonly applied?: string;
  /** The probe's own note, escaped and at most 200 code units. */
  readonly detail?: string;
  /** The type of the last try's error, for `failed`. */
  readonly errorType?: string;
}

/** Receives every event. Must not throw; an error it throws is swallowed. */
export type GuardEventListener = (event: GuardEvent) => void;
