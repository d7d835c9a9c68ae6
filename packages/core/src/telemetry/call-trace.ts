import type { Attributes, Span } from '@opentelemetry/api';
import { ApprovalDeniedError } from '../errors/approval-denied-error.js';
import { ApprovalRequiredError } from '../errors/approval-required-error.js';
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import type { GuardEvent, GuardEventType } from '../guard/guard-events.js';
import type { AttemptInfo, Body, CallObserver } from '../guard/guard-types.js';
import { describeError } from '../guard/recorded-error.js';
import type { RecordRef } from '../store/idempotency-store.js';
import type { CallInstruments } from './instruments.js';
import {
  ATTR_ARGUMENTS_DIFFER,
  ATTR_ATTEMPT,
  ATTR_BODY_DURATION,
  ATTR_ERROR_TYPE,
  ATTR_FENCE,
  ATTR_IDEMPOTENCY_KEY,
  ATTR_OUTCOME,
  ATTR_RECONCILE_APPLIED,
  ATTR_RECONCILE_VERDICT,
  ATTR_RECORDED,
  ATTR_STORE_DURATION,
  ATTR_STORE_STATUS,
  ATTR_TAKEOVER,
  ATTR_TENANT,
  EVENT_PREFIX,
  type GuardOutcome,
  STORE_EVENT_PREFIX,
} from './names.js';

/** `SpanStatusCode.ERROR` of `@opentelemetry/api`, without loading it. */
const STATUS_ERROR = 2;

/** One bit per event type: the events a call has seen, kept in one number. */
const BIT: Readonly<Record<GuardEventType, number>> = {
  'tool.started': 1,
  'tool.completed': 2,
  'tool.failed': 4,
  'tool.deduplicated': 8,
  'tool.waiting': 16,
  'tool.pending': 32,
  'tool.indeterminate': 64,
  'tool.abandoned': 128,
  'tool.fenced': 256,
  'tool.stale_result': 512,
  'tool.resolved': 1024,
  'tool.interrupted': 2048,
  'tool.approval_required': 4096,
  'tool.approval_consumed': 8192,
  'tool.denied': 16384,
  'tool.approval_decided': 32768,
  'tool.reconciled': 65536,
};

/** Outcomes decided by an event, most serious first: the first one the call saw is its outcome. */
const DECISIVE: ReadonlyArray<readonly [number, GuardOutcome]> = [
  [BIT['tool.indeterminate'], 'indeterminate'],
  [BIT['tool.abandoned'], 'abandoned'],
  [BIT['tool.pending'], 'pending'],
  [BIT['tool.fenced'], 'fenced'],
  [BIT['tool.stale_result'], 'stale_result'],
];

/**
 * What one guarded call does, as its span and metric points tell it: the guard's events (the
 * same ones `onEvent` gets), its store round trips, and the time spent in the body and waiting
 * on another holder. Everything after the caller was answered (rule G4's late settlement) is
 * left out: the span has ended by then. Internal.
 */
export class CallTrace implements CallObserver {
  private readonly startedMs = performance.now();
  private seen = 0;
  private bodyEntered = false;
  private bodiesRunning = 0;
  private bodySince = 0;
  private bodyMs = 0;
  private waitingSince: number | undefined;
  private waitMs = 0;
  private attempt = 0;
  private fence = 0;
  private ended = false;
  /** A reconcile probe's verdict settled this call's record (the call answers with it). */
  private reconciled = false;

  /**
   * @param span the call's span when it is recording (undefined otherwise: nothing is built for it)
   * @param base the attributes every metric point of the call has (tool, kind)
   */
  constructor(
    private readonly span: Span | undefined,
    private readonly instruments: CallInstruments | undefined,
    readonly base: Attributes,
  ) {}

  /** Store round trips are timed only for a recording span (they are its span events). */
  get timed(): boolean {
    return !this.ended && this.span !== undefined;
  }

  /** The call's record is known: its key and tenant go on the span. */
  attach(ref: RecordRef): void {
    quietly(() => this.span?.setAttributes({ [ATTR_IDEMPOTENCY_KEY]: ref.key, [ATTR_TENANT]: ref.tenant }));
  }

  /** The body, timed: the guard's overhead is the call's time without it. */
  timeBody<T>(body: Body<T>): Body<T> {
    return (context) => {
      this.bodyStarted();
      let result: T | PromiseLike<T>;
      let thenable: boolean;
      try {
        result = body(context);
        thenable = isThenable(result);
      } catch (error) {
        this.bodyEnded();
        throw error;
      }
      if (!thenable) {
        this.bodyEnded();
        return result;
      }
      return Promise.resolve(result as PromiseLike<T>).then(
        (value) => {
          this.bodyEnded();
          return value;
        },
        (error: unknown) => {
          this.bodyEnded();
          throw error;
        },
      );
    };
  }

  /** A guard event of this call (emitted by GuardRuntime.emit, before the listener gets it). */
  event(type: GuardEventType, info: AttemptInfo, extra: Partial<GuardEvent> | undefined): void {
    if (this.ended) return;
    this.seen |= BIT[type];
    if (info.attempt > 0) {
      this.attempt = info.attempt;
      this.fence = info.fence;
    }
    // Waiting on another holder lasts until this call enters the body or is answered.
    if (type === 'tool.reconciled' && extra?.reconcile?.applied === 'resolved') this.reconciled = true;
    if (type === 'tool.waiting') this.waitingSince ??= performance.now();
    else if (type === 'tool.started') this.closeWait(performance.now());
    const span = this.span;
    if (span !== undefined) quietly(() => addGuardEvent(span, type, info, extra));
  }

  /** A store round trip starts (monotonic ms). */
  storeStarted(): number {
    return performance.now();
  }

  /** A store round trip ended: a span event at its start, with its duration (s) and answer. */
  storeEnded(operation: string, startedMs: number, result: unknown, failed: boolean, error: unknown): void {
    if (this.ended) return;
    const durationMs = performance.now() - startedMs;
    const span = this.span;
    if (span === undefined) return;
    quietly(() => {
      const attributes: Attributes = { [ATTR_STORE_DURATION]: durationMs / 1000 };
      const status = statusOf(result);
      if (status !== undefined) attributes[ATTR_STORE_STATUS] = status;
      if (failed) attributes[ATTR_ERROR_TYPE] = describeError(error).type;
      span.addEvent(STORE_EVENT_PREFIX + operation, attributes, startedMs);
    });
  }

  /** The caller is answered (`threw`: with `error`): the outcome goes on the span and the metrics. */
  finish(threw: boolean, error: unknown): void {
    if (this.ended) return;
    const nowMs = performance.now();
    this.closeWait(nowMs);
    if (this.bodiesRunning > 0) this.bodyMs += nowMs - this.bodySince;
    this.ended = true;
    const outcome = this.outcome(threw, error);
    const errorType = threw ? describeError(error).type : undefined;
    const overheadMs = Math.max(0, nowMs - this.startedMs - this.bodyMs - this.waitMs);
    const span = this.span;
    if (span !== undefined) {
      const attributes: Attributes = { [ATTR_OUTCOME]: outcome };
      if (this.attempt > 0) {
        attributes[ATTR_ATTEMPT] = this.attempt;
        attributes[ATTR_FENCE] = this.fence;
      }
      if (errorType !== undefined) {
        attributes[ATTR_ERROR_TYPE] = errorType;
        // No description: an error's message may quote the arguments (docs/observability.md).
        span.setStatus({ code: STATUS_ERROR });
      }
      span.setAttributes(attributes);
    }
    this.instruments?.record(this.base, outcome, errorType, overheadMs / 1000, this.waitMs / 1000);
  }

  /**
   * After the caller was answered: the record of an interrupted call was left indeterminate (its
   * body failed, or ran past waitTimeoutMs). The span has ended; the metric gets one more point,
   * outcome `indeterminate` with `toolfence.late`, so an alert on indeterminate records sees it.
   */
  lateIndeterminate(errorType: string | undefined): void {
    quietly(() => this.instruments?.recordLate(this.base, 'indeterminate', errorType));
  }

  private outcome(threw: boolean, error: unknown): GuardOutcome {
    if (threw) {
      // The stop the caller got is the outcome, whatever events came before (not every stop has one).
      if (IndeterminateOutcomeError.isInstance(error)) {
        // Answered before the body settled (rule G4): no record needs a decision yet.
        return (this.seen & BIT['tool.interrupted']) !== 0 ? 'interrupted' : 'indeterminate';
      }
      if (ExecutionAbandonedError.isInstance(error)) return 'abandoned';
      if (ApprovalRequiredError.isInstance(error)) return 'approval_required';
      if (ApprovalDeniedError.isInstance(error)) return 'denied';
      if (IdempotencyConflictError.isInstance(error)) return 'conflict';
      if (OutcomePendingError.isInstance(error)) return 'pending';
    }
    // Its unknown outcome was settled by the policy's probe, without a person.
    if (this.reconciled) return 'reconciled';
    for (const [bit, outcome] of DECISIVE) if ((this.seen & bit) !== 0) return outcome;
    if (this.bodyEntered) return 'executed';
    if ((this.seen & BIT['tool.deduplicated']) !== 0) {
      return (this.seen & BIT['tool.waiting']) !== 0 ? 'waited' : 'replayed';
    }
    return 'error';
  }

  private closeWait(nowMs: number): void {
    if (this.waitingSince === undefined) return;
    this.waitMs += nowMs - this.waitingSince;
    this.waitingSince = undefined;
  }

  private bodyStarted(): void {
    this.bodyEntered = true;
    if (this.bodiesRunning++ === 0) this.bodySince = performance.now();
  }

  private bodyEnded(): void {
    if (this.ended) return;
    if (--this.bodiesRunning === 0) this.bodyMs += performance.now() - this.bodySince;
  }
}

/** A guard event as a span event: the attempt and fence it concerns, never a message. */
function addGuardEvent(
  span: Span,
  type: GuardEventType,
  info: AttemptInfo,
  extra: Partial<GuardEvent> | undefined,
): void {
  const attributes: Attributes = { [ATTR_ATTEMPT]: info.attempt, [ATTR_FENCE]: info.fence };
  if (extra?.error !== undefined) attributes[ATTR_ERROR_TYPE] = extra.error.type;
  if (extra?.durationMs !== undefined) attributes[ATTR_BODY_DURATION] = extra.durationMs / 1000;
  if (extra?.takeover !== undefined) {
    attributes[ATTR_TAKEOVER] = extra.takeover;
    span.setAttribute(ATTR_TAKEOVER, extra.takeover);
  }
  if (extra?.recorded !== undefined) {
    attributes[ATTR_RECORDED] = extra.recorded;
    span.setAttribute(ATTR_RECORDED, extra.recorded);
  }
  if (extra?.argumentsDiffer !== undefined) attributes[ATTR_ARGUMENTS_DIFFER] = extra.argumentsDiffer;
  if (extra?.reconcile !== undefined) {
    attributes[ATTR_RECONCILE_VERDICT] = extra.reconcile.verdict;
    span.setAttribute(ATTR_RECONCILE_VERDICT, extra.reconcile.verdict);
    if (extra.reconcile.applied !== undefined) {
      attributes[ATTR_RECONCILE_APPLIED] = extra.reconcile.applied;
      span.setAttribute(ATTR_RECONCILE_APPLIED, extra.reconcile.applied);
    }
  }
  span.addEvent(EVENT_PREFIX + type, attributes);
}

/** A broken tracer, meter or exporter must not change the outcome of a call. */
export function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // Telemetry is best effort.
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<T>).then === 'function'
  );
}

/** The store's answer in one word (`acquired`, `busy`, `renewed`, `settled`…), when it has one. */
function statusOf(result: unknown): string | undefined {
  if (typeof result === 'string') return result;
  if (result !== null && typeof result === 'object') {
    const status = (result as { status?: unknown }).status;
    if (typeof status === 'string') return status;
  }
  return undefined;
}
