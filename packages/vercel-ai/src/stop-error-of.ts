import {
  type CallStopError,
  findStopError,
  type StepStoppedError,
  type StopSearchChild,
} from '@toolfence/core';

/**
 * The toolfence stop inside whatever the AI SDK (or your code) wrapped it in (one call's
 * `CallStopError`, or a `StepStoppedError` for every stop of a step), or `undefined` when there
 * is none.
 *
 * Looks through a `generateText` result (its `steps`, `content`), `await streamTextResult.steps`,
 * a step, its `tool-error` parts (whose `toolCallId` becomes the stop's `callId`), a rejection
 * (`cause` chains, an `AggregateError`'s `errors`) and arrays. A {@link StepStoppedError} found
 * anywhere is returned as it is; a single `IndeterminateOutcomeError` /
 * `ExecutionAbandonedError` is returned itself; several distinct ones are returned as one
 * `StepStoppedError` listing them all (keys, tools, call ids), in the order the model made them.
 *
 * @example
 * ```ts
 * const result = await generateText({ ..., stopWhen: [stepCountIs(10), stopOnIndeterminate()] });
 * const stop = stopErrorOf(result);
 * if (stop) for (const call of StepStoppedError.callsOf(stop)) await alert(call.tool, call.key, call.callId);
 * ```
 */
export function stopErrorOf(value: unknown): CallStopError | StepStoppedError | undefined {
  return findStopError(value, { childrenOf: aiSdkChildren });
}

/** Where the AI SDK keeps stops, besides arrays, `errors` and `cause` (core's `findStopError`). */
function aiSdkChildren(value: object): StopSearchChild[] {
  const record = value as {
    type?: unknown;
    error?: unknown;
    toolCallId?: unknown;
    steps?: unknown;
    content?: unknown;
  };
  const children: StopSearchChild[] = [];
  // A tool-error part (result content, a step's content, a fullStream part).
  if (record.type === 'tool-error' || record.type === 'error') {
    children.push({
      value: record.error,
      callId: typeof record.toolCallId === 'string' ? record.toolCallId : undefined,
    });
  }
  // A generateText result or a step: the steps first, so stops come in step and call order.
  if (Array.isArray(record.steps)) children.push({ value: record.steps });
  if (Array.isArray(record.content)) children.push({ value: record.content });
  return children;
}
