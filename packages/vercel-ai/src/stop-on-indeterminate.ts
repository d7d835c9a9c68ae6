import type { CallStopError, StepStoppedError } from '@toolfence/core';
import { isSetupFault } from './setup-fault.js';
import { stopErrorOf } from './stop-error-of.js';

/** The part of an AI SDK step the helpers read (AI SDK 6 and 7 `StepResult`). */
export interface StepLike {
  readonly content: ReadonlyArray<unknown>;
}

/** Options of {@link stopOnIndeterminate}. */
export interface StopOnIndeterminateOptions {
  /**
   * Throw the error from the stop condition instead of returning `true`: the SDK does not catch
   * it, so `generateText` rejects with it (the `IndeterminateOutcomeError` /
   * `ExecutionAbandonedError` itself, or a `StepStoppedError` listing every stop of the step),
   * and for `streamText` the `fullStream` iteration throws it and `steps`, `text` and the other
   * result promises reject with it. Default `false`: the run ends normally and
   * {@link stopErrorOf} reads the error from the result.
   */
  readonly rethrow?: boolean;
}

/**
 * A stop condition for `stopWhen` that ends the run after a step in which a fenced tool ended in
 * `IndeterminateOutcomeError` or `ExecutionAbandonedError`, so no further step runs (and the
 * model never gets to call the tool again). Combine it with your own conditions:
 * `stopWhen: [stepCountIs(5), stopOnIndeterminate()]`.
 *
 * A set-up fault (a `'run'`-scoped policy and no run id: neither `fenceTools({ runId })` nor
 * `toolfenceContext({ runId })`) is always thrown, whatever `rethrow` says: `generateText`
 * rejects with that `KeyDerivationError`, the model never reads it.
 *
 * The SDK evaluates stop conditions after every step whose tool calls all produced an output
 * (a `tool-error` counts), in AI SDK 6 and 7. Other calls of that same step have already run:
 * the SDK runs the calls of one step concurrently; every stop among them is in the error.
 */
export function stopOnIndeterminate(
  options: StopOnIndeterminateOptions = {},
): (options: { readonly steps: ReadonlyArray<StepLike> }) => boolean {
  const rethrow = options.rethrow === true;
  return ({ steps }) => {
    const last = steps[steps.length - 1];
    if (last === undefined) return false;
    const fault = setupFaultOf(last);
    if (fault !== undefined) throw fault;
    const error = stopErrorOf(last);
    if (error !== undefined && rethrow) throw error;
    return error !== undefined;
  };
}

/**
 * The stop that ended a run, read from the `tool-error` parts of its steps: `stopErrorOf` of the
 * steps (every stop of the run, with call ids); `undefined` when no call ended that way.
 *
 * @param source a `generateText` result, `{ steps: await streamTextResult.steps }`, or the steps.
 */
export function indeterminateErrorOf(
  source: { readonly steps: ReadonlyArray<StepLike> } | ReadonlyArray<StepLike>,
): CallStopError | StepStoppedError | undefined {
  return stopErrorOf(Array.isArray(source) ? source : (source as { steps: unknown }).steps);
}

function setupFaultOf(step: StepLike): Error | undefined {
  for (const part of step.content ?? []) {
    const { type, error } = (part ?? {}) as { type?: unknown; error?: unknown };
    if (type === 'tool-error' && isSetupFault(error)) return error;
  }
  return undefined;
}
