import { isStoppingError, type StoppingError } from './fence-tools.js';

/** The part of an AI SDK step the helpers read (AI SDK 6 and 7 `StepResult`). */
export interface StepLike {
  readonly content: ReadonlyArray<unknown>;
}

/** Options of {@link stopOnIndeterminate}. */
export interface StopOnIndeterminateOptions {
  /**
   * Throw the error from the stop condition instead of returning `true`: the SDK does not catch
   * it, so `generateText` rejects with the `IndeterminateOutcomeError` /
   * `ExecutionAbandonedError` itself, and for `streamText` the `fullStream` iteration throws it
   * and `steps`, `text` and the other result promises reject with it. Default `false`: the run
   * ends normally and {@link indeterminateErrorOf} reads the error from the result.
   */
  readonly rethrow?: boolean;
}

/**
 * A stop condition for `stopWhen` that ends the run after a step in which a fenced tool ended in
 * `IndeterminateOutcomeError` or `ExecutionAbandonedError`, so no further step runs (and the
 * model never gets to call the tool again). Combine it with your own conditions:
 * `stopWhen: [stepCountIs(5), stopOnIndeterminate()]`.
 *
 * The SDK evaluates stop conditions after every step whose tool calls all produced an output
 * (a `tool-error` counts), in AI SDK 6 and 7. Other calls of that same step have already run:
 * the SDK runs the calls of one step concurrently.
 */
export function stopOnIndeterminate(
  options: StopOnIndeterminateOptions = {},
): (options: { readonly steps: ReadonlyArray<StepLike> }) => boolean {
  const rethrow = options.rethrow === true;
  return ({ steps }) => {
    const last = steps[steps.length - 1];
    const error = last === undefined ? undefined : stoppingErrorOfStep(last);
    if (error !== undefined && rethrow) throw error;
    return error !== undefined;
  };
}

/**
 * The `IndeterminateOutcomeError` or `ExecutionAbandonedError` (the real error object, with its
 * `key`, `tool`, `attempt` and `fence`) that ended a run, read from the `tool-error` parts of
 * its steps; `undefined` when no call ended that way.
 *
 * @param source a `generateText` result, `{ steps: await streamTextResult.steps }`, or the steps.
 */
export function indeterminateErrorOf(
  source: { readonly steps: ReadonlyArray<StepLike> } | ReadonlyArray<StepLike>,
): StoppingError | undefined {
  const steps = isStepArray(source) ? source : source.steps;
  for (const step of steps) {
    const error = stoppingErrorOfStep(step);
    if (error !== undefined) return error;
  }
  return undefined;
}

function stoppingErrorOfStep(step: StepLike): StoppingError | undefined {
  for (const part of step.content ?? []) {
    const { type, error } = (part ?? {}) as { type?: unknown; error?: unknown };
    if (type === 'tool-error' && isStoppingError(error)) return error;
  }
  return undefined;
}

function isStepArray(
  source: { readonly steps: ReadonlyArray<StepLike> } | ReadonlyArray<StepLike>,
): source is ReadonlyArray<StepLike> {
  return Array.isArray(source);
}
