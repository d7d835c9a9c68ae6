import type { ExecutionAbandonedError } from './execution-abandoned-error.js';
import type { IndeterminateOutcomeError } from './indeterminate-outcome-error.js';
import { ToolfenceError } from './toolfence-error.js';

/** One call of a step that ended in a stop: its outcome is unknown, or it was abandoned. */
export interface StoppedToolCall {
  /** The idempotency key (what `guard.resolve(key, …)` settles). */
  readonly key: string;
  readonly tool: string;
  /** The SDK's tool call id, when the call had one. */
  readonly callId: string | undefined;
  /** The call's own error, with its `attempt`, `fence` and (indeterminate) `reasonType`. */
  readonly error: IndeterminateOutcomeError | ExecutionAbandonedError;
}

/**
 * Several tool calls of one agent step (the SDKs run a step's calls concurrently) ended in
 * `IndeterminateOutcomeError` or `ExecutionAbandonedError`. Lists every one of them in `stops`,
 * in the order the model made the calls, so an operator can settle each record; the error also
 * carries the FIRST stop's `key`, `tool`, `attempt`, `fence` and `callId` (and that error as
 * `cause`), so code that reads one stop keeps working.
 *
 * A step with a single stop rejects with that stop's own error, not with this one.
 */
export class StepStoppedError extends ToolfenceError {
  /** Every stopped call of the step (at least two), in call order. */
  readonly stops: readonly StoppedToolCall[];
  readonly key: string;
  readonly tool: string;
  readonly callId: string | undefined;
  readonly attempt: number;
  readonly fence: number;

  /** @throws TypeError when `stops` is empty. */
  constructor(stops: readonly StoppedToolCall[]) {
    const first = stops[0];
    if (first === undefined) throw new TypeError('StepStoppedError needs at least one stopped call');
    super(
      'STEP_STOPPED',
      `${stops.length} tool calls of this step did not finish cleanly; each may have taken effect: ` +
        stops
          .map(
            (stop) =>
              `"${stop.tool}"${stop.callId === undefined ? '' : ` (call ${stop.callId})`} ` +
              `${stop.error.name === 'ExecutionAbandonedError' ? 'abandoned' : 'outcome unknown'}, key ${stop.key}`,
          )
          .join('; ') +
        '. Verify each with the system it touched, then settle it with guard.resolve(key, …).',
      { cause: first.error },
    );
    this.name = 'StepStoppedError';
    this.stops = Object.freeze([...stops]);
    this.key = first.key;
    this.tool = first.tool;
    this.callId = first.callId;
    this.attempt = first.error.attempt;
    this.fence = first.error.fence;
  }

  static override isInstance(error: unknown): error is StepStoppedError {
    return ToolfenceError.hasCode(error, 'STEP_STOPPED');
  }

  /**
   * The stopped calls a stop stands for: `stops` of a `StepStoppedError`, else the one error as a
   * single entry (its `callId`: the SDK's tool call id the guard was given, else `undefined`).
   */
  static callsOf(
    stop: StepStoppedError | IndeterminateOutcomeError | ExecutionAbandonedError,
  ): readonly StoppedToolCall[] {
    if (StepStoppedError.isInstance(stop)) return stop.stops;
    return [{ key: stop.key, tool: stop.tool, callId: stop.callId, error: stop }];
  }
}
