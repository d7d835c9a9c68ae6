import { randomUUID } from 'node:crypto';
import { type OutcomeCodec, UNNAMED_CODEC } from '../codec/outcome-codec.js';
import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import type {
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  RecordedError,
  RecordRef,
} from '../store/idempotency-store.js';
import { isWellFormedText, MAX_OUTCOME_LENGTH, nameProblem } from '../store/store-input.js';
import { asStoreError, describeError, indeterminateOutcomeError } from './call-errors.js';
import type { AttemptInfo, CallState } from './call-state.js';
import type { GuardEvent, GuardEventListener, GuardEventType } from './guard-events.js';
import { type ErrorDescriber, recordedError } from './recorded-error.js';
import type { StepBudget } from './step-budget.js';

/** The name a codec is recorded under: its own when a store can keep it, else `custom`. */
export function codecNameOf(codec: OutcomeCodec): string {
  const name = codec.name;
  return typeof name === 'string' && nameProblem(name) === undefined ? name : UNNAMED_CODEC;
}

/**
 * What the parts of one guard share: its store, codec and event listener, and the owner ids of
 * its claims. Internal; one per {@link Guard}.
 */
export class GuardRuntime {
  private readonly instanceId = randomUUID();
  private attemptCounter = 0;
  /** Interrupted calls whose record was already reported left indeterminate. */
  private readonly lateMarked = new WeakSet<CallState>();

  /** Recorded with every claim (`IdempotencyRecord.codec`): the codec's name, or `custom`. */
  readonly codecName: string;

  constructor(
    readonly store: IdempotencyStore,
    readonly codec: OutcomeCodec,
    private readonly onEvent: GuardEventListener | undefined,
    /** The deadline of each guard step (step-budget.ts). */
    readonly stepBudget: StepBudget = { budgetMs: undefined, boundsFirstTry: false },
    /** `GuardOptions.describeError` (recorded-error.ts). */
    private readonly describeErrorHook: ErrorDescriber | undefined = undefined,
  ) {
    this.codecName = codecNameOf(codec);
  }

  /** A body's error as it is recorded and emitted: type and code, a message only from the hook. */
  recordError(error: unknown): RecordedError {
    return recordedError(error, this.describeErrorHook);
  }

  /** A fresh owner id for a claim: unique to this guard and to the claim. */
  nextOwner(): string {
    return `${this.instanceId}:${++this.attemptCounter}`;
  }

  /** Tell the listener; a listener can never change the outcome of a call. */
  emit(type: GuardEventType, state: CallState, attempt: AttemptInfo, extra: Partial<GuardEvent> = {}): void {
    // The call's span tells the story its events tell (docs/observability.md).
    state.trace?.event(type, attempt, extra);
    if (this.onEvent === undefined) return;
    this.deliver({
      type,
      key: state.ref.key,
      tool: state.call.tool,
      tenant: state.ref.tenant,
      runId: state.runId,
      callId: state.call.callId,
      attempt: attempt.attempt,
      fence: attempt.fence,
      timeMs: Date.now(),
      ...extra,
    });
  }

  /** An operator's event about a record (no call in this process): its fields from the record. */
  emitOperator(
    type: GuardEventType,
    ref: RecordRef,
    record: IdempotencyRecord | null,
    extra: Partial<GuardEvent>,
  ): void {
    if (this.onEvent === undefined) return;
    this.deliver({
      type,
      key: ref.key,
      tool: record?.tool ?? '',
      tenant: ref.tenant,
      runId: record?.runId,
      callId: record?.callId,
      attempt: record?.attempt ?? 0,
      fence: record?.fence ?? 0,
      timeMs: Date.now(),
      ...extra,
    });
  }

  private deliver(event: GuardEvent): void {
    if (this.onEvent === undefined) return;
    try {
      const returned: unknown = this.onEvent(event);
      // An async listener's rejection must not become an unhandled rejection either.
      if (
        returned !== null &&
        typeof returned === 'object' &&
        typeof (returned as PromiseLike<unknown>).then === 'function'
      ) {
        (returned as PromiseLike<unknown>).then(undefined, () => undefined);
      }
    } catch {
      // A listener must not change the outcome of a call.
    }
  }

  /** Encode with the codec; any failure is an {@link OutcomeEncodingError}. */
  encodeOutcome(value: unknown, tool: string | undefined): string {
    let encoded: unknown;
    try {
      encoded = this.codec.encode(value);
    } catch (error) {
      throw new OutcomeEncodingError('encode', describeError(error).message, { tool, cause: error });
    }
    if (typeof encoded !== 'string') {
      throw new OutcomeEncodingError('encode', `the codec returned a ${typeof encoded}, not a string`, {
        tool,
      });
    }
    if (encoded.length > MAX_OUTCOME_LENGTH || !isWellFormedText(encoded)) {
      throw new OutcomeEncodingError(
        'encode',
        encoded.length > MAX_OUTCOME_LENGTH
          ? `the encoded outcome has ${encoded.length} characters, more than ${MAX_OUTCOME_LENGTH}`
          : 'the codec returned a string with a lone surrogate, which no store can keep byte for byte',
        { tool },
      );
    }
    return encoded;
  }

  /** Decode a recorded outcome; any failure is an {@link OutcomeEncodingError}. */
  decodeOutcome(encoded: string, tool: string): unknown {
    try {
      return this.codec.decode(encoded);
    } catch (error) {
      throw new OutcomeEncodingError('decode', describeError(error).message, { tool, cause: error });
    }
  }

  /** Release; true when this holder's claim was released. */
  async releaseQuietly(ref: RecordRef, holder: Holder): Promise<boolean> {
    try {
      return (await this.store.release(ref, holder)).status === 'released';
    } catch {
      // Unreleased: the lease expires and the key is taken over as a lost attempt.
      return false;
    }
  }

  /** Mark the holder's record indeterminate (best effort) and return the error for the caller. */
  async markIndeterminate(
    state: CallState,
    holder: Holder,
    error: unknown,
    durationMs: number,
    attemptInfo: AttemptInfo,
  ): Promise<IndeterminateOutcomeError> {
    const recorded = this.recordError(error);
    try {
      await this.store.markIndeterminate(state.ref, holder, recorded, state.policy.retentionMs);
    } catch {
      // The claim stays in progress; when its lease expires a claimer marks it indeterminate.
    }
    this.emit('tool.indeterminate', state, attemptInfo, { error: recorded, durationMs });
    // The caller, in this process, gets the reason whole (it holds the error as `cause` anyway);
    // only what is stored and emitted follows describeError (issue 30, item 6).
    return indeterminateOutcomeError(state, attemptInfo, describeError(error), { cause: error });
  }

  /**
   * The record of an interrupted call (its caller already answered, `tool.interrupted`) is left
   * indeterminate, now that its body failed or ran past waitTimeoutMs: the listener hears
   * `tool.indeterminate`, and the metric gets a late point (issue 27, item 2). Best effort: the
   * store's mark may have failed, and then the lease's expiry makes the record indeterminate.
   */
  async markLateIndeterminate(
    state: CallState,
    holder: Holder,
    attemptInfo: AttemptInfo,
    recorded: RecordedError,
  ): Promise<void> {
    try {
      await this.store.markIndeterminate(state.ref, holder, recorded, state.policy.retentionMs);
    } finally {
      // Once per call: the grace timer and a body failing after it both mark.
      if (!this.lateMarked.has(state)) {
        this.lateMarked.add(state);
        this.emit('tool.indeterminate', state, attemptInfo, { error: recorded });
        state.trace?.lateIndeterminate(recorded.type);
      }
    }
  }

  /** A store operation whose failure is reported as the guard reports store errors. */
  async storeCall<R>(operation: string, fn: () => Promise<R>, signal?: AbortSignal): Promise<R> {
    try {
      return await fn();
    } catch (error) {
      // The caller's own cancellation is not a store failure.
      if (signal?.aborted === true && error === signal.reason) throw error;
      throw asStoreError(operation, error);
    }
  }
}
