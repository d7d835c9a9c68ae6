import { randomUUID } from 'node:crypto';
import { type OutcomeCodec, UNNAMED_CODEC } from '../codec/outcome-codec.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import type {
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  RecordedError,
  RecordRef,
} from '../store/idempotency-store.js';
import { isWellFormedText, MAX_OUTCOME_LENGTH, nameProblem } from '../store/store-input.js';
import { asStoreError } from './call-errors.js';
import type { CallState } from './call-state.js';
import type { GuardEvent, GuardEventListener, GuardEventType } from './guard-events.js';
import type { AttemptInfo } from './guard-types.js';
import { describeError, type ErrorDescriber, recordedError } from './recorded-error.js';
import type { StepBudget } from './step-budget.js';

/** The name a codec is recorded under: its own when a store can keep it, else `custom`. */
export function codecNameOf(codec: OutcomeCodec): string {
  const name = codec.name;
  return typeof name === 'string' && nameProblem(name) === undefined ? name : UNNAMED_CODEC;
}

/** The ports of one guard, as its options gave them (checked). */
export interface GuardPorts {
  /** The store every call uses (the traced one when the guard has telemetry). */
  readonly store: IdempotencyStore;
  readonly codec: OutcomeCodec;
  readonly onEvent: GuardEventListener | undefined;
  /** The deadline of each guard step (step-budget.ts). */
  readonly stepBudget: StepBudget;
  /** `GuardOptions.describeError` (recorded-error.ts). */
  readonly describeError: ErrorDescriber | undefined;
}

/**
 * What the parts of one guard share: its ports (store, codec, event listener, step budget, error
 * describer) and the owner ids of its claims. It decides nothing about a call. Internal; one per
 * {@link Guard}.
 */
export class GuardRuntime {
  private readonly instanceId = randomUUID();
  private attemptCounter = 0;
  readonly store: IdempotencyStore;
  readonly codec: OutcomeCodec;
  readonly stepBudget: StepBudget;
  private readonly onEvent: GuardEventListener | undefined;
  private readonly describeErrorHook: ErrorDescriber | undefined;

  /** Recorded with every claim (`IdempotencyRecord.codec`): the codec's name, or `custom`. */
  readonly codecName: string;

  constructor(ports: GuardPorts) {
    this.store = ports.store;
    this.codec = ports.codec;
    this.onEvent = ports.onEvent;
    this.stepBudget = ports.stepBudget;
    this.describeErrorHook = ports.describeError;
    this.codecName = codecNameOf(ports.codec);
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
