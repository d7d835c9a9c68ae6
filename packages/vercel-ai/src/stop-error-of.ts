import {
  ExecutionAbandonedError,
  IndeterminateOutcomeError,
  StepStoppedError,
  type StoppedToolCall,
} from '@toolfence/core';

/** What stopped a run: one call's stop, or every stop of a step. */
export type StopError = IndeterminateOutcomeError | ExecutionAbandonedError | StepStoppedError;

/**
 * The toolfence stop inside whatever the AI SDK (or your code) wrapped it in, or `undefined`
 * when there is none.
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
export function stopErrorOf(value: unknown): StopError | undefined {
  const found: StoppedToolCall[] = [];
  const step = collectStops(value, undefined, found, new Set(), 0);
  if (step !== undefined) return step;
  if (found.length === 0) return undefined;
  if (found.length === 1) return found[0]?.error;
  return new StepStoppedError(found);
}

const MAX_DEPTH = 16;

/** Walk `value`; returns a StepStoppedError as soon as one is met, else fills `found`. */
function collectStops(
  value: unknown,
  callId: string | undefined,
  found: StoppedToolCall[],
  seen: Set<object>,
  depth: number,
): StepStoppedError | undefined {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  if (StepStoppedError.isInstance(value)) return value;
  if (IndeterminateOutcomeError.isInstance(value) || ExecutionAbandonedError.isInstance(value)) {
    const known = found.findIndex((call) => call.error === value);
    if (known === -1) found.push({ key: value.key, tool: value.tool, callId, error: value });
    else if (found[known]?.callId === undefined && callId !== undefined) {
      found[known] = { ...(found[known] as StoppedToolCall), callId };
    }
    return undefined;
  }
  if (seen.has(value)) return undefined;
  seen.add(value);
  const record = value as {
    type?: unknown;
    error?: unknown;
    toolCallId?: unknown;
    errors?: unknown;
    cause?: unknown;
    steps?: unknown;
    content?: unknown;
  };
  const children: Array<[unknown, string | undefined]> = [];
  if (Array.isArray(value)) for (const item of value) children.push([item, undefined]);
  // A tool-error part (result content, a step's content, a fullStream part).
  if (record.type === 'tool-error' || record.type === 'error') {
    children.push([record.error, typeof record.toolCallId === 'string' ? record.toolCallId : undefined]);
  }
  // A generateText result or a step: the steps first, so stops come in step and call order.
  if (Array.isArray(record.steps)) children.push([record.steps, undefined]);
  if (Array.isArray(record.content)) children.push([record.content, undefined]);
  if (Array.isArray(record.errors)) children.push([record.errors, undefined]);
  if ('cause' in record) children.push([record.cause, undefined]);
  for (const [child, childCallId] of children) {
    const step = collectStops(child, childCallId, found, seen, depth + 1);
    if (step !== undefined) return step;
  }
  return undefined;
}
