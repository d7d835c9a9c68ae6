import { StepStoppedError, type StoppedToolCall } from './step-stopped-error.js';
import { type CallStopError, isCallStopError } from './stop-errors.js';

/** One more value {@link findStopError} looks through, and the tool call a stop found in it is for. */
export interface StopSearchChild {
  /** The value to look through (a stop itself, or anything that may hold one). */
  readonly value: unknown;
  /**
   * The SDK's tool call id of a stop that `value` itself is (not one found deeper inside it); it
   * becomes that stop's `callId` in a {@link StepStoppedError}.
   */
  readonly callId?: string | undefined;
}

/** Options of {@link findStopError}. */
export interface StopSearchOptions {
  /**
   * The places inside an object (not itself a stop) that an SDK keeps stops in, beyond the ones
   * looked through always: e.g. the AI SDK's `steps`, `content` and `tool-error` parts. They are
   * looked through after the object's array items and before its `errors` and `cause`.
   */
  readonly childrenOf?: ((value: object) => readonly StopSearchChild[]) | undefined;
}

/** How deep {@link findStopError} follows nested values. */
const MAX_DEPTH = 16;

/**
 * The toolfence stop inside whatever an SDK (or your code) wrapped it in, or `undefined` when
 * there is none. The one search the adapters' `stopErrorOf` share.
 *
 * Looks through the value itself, array items, an `AggregateError`'s `errors`, `cause` chains,
 * and whatever `options.childrenOf` names (16 levels deep at most, cycles ignored). A
 * {@link StepStoppedError} found anywhere is returned as it is (it lists every stop of its step);
 * a single {@link IndeterminateOutcomeError} / {@link ExecutionAbandonedError} is returned itself;
 * several distinct ones are returned as one `StepStoppedError` listing them all, in the order
 * found, each with the call id `childrenOf` gave it (or `undefined`).
 *
 * @example
 * ```ts
 * try { await agent.invoke(input); } catch (error) {
 *   const stop = findStopError(error);
 *   if (stop === undefined) throw error;
 *   for (const call of StepStoppedError.callsOf(stop)) await alert(call.tool, call.key, call.callId);
 * }
 * ```
 */
export function findStopError(
  value: unknown,
  options: StopSearchOptions = {},
): CallStopError | StepStoppedError | undefined {
  const search: Search = { found: [], seen: new Set(), childrenOf: options.childrenOf };
  const step = collectStops(search, value, undefined, 0);
  if (step !== undefined) return step;
  if (search.found.length === 0) return undefined;
  if (search.found.length === 1) return search.found[0]?.error;
  return new StepStoppedError(search.found);
}

interface Search {
  readonly found: StoppedToolCall[];
  readonly seen: Set<object>;
  readonly childrenOf: StopSearchOptions['childrenOf'];
}

/** Walk `value`; returns a StepStoppedError as soon as one is met, else fills `search.found`. */
function collectStops(
  search: Search,
  value: unknown,
  callId: string | undefined,
  depth: number,
): StepStoppedError | undefined {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return undefined;
  if (StepStoppedError.isInstance(value)) return value;
  if (isCallStopError(value)) {
    noteStop(search.found, value, callId);
    return undefined;
  }
  if (search.seen.has(value)) return undefined;
  search.seen.add(value);
  for (const child of childrenOf(search, value)) {
    const step = collectStops(search, child.value, child.callId, depth + 1);
    if (step !== undefined) return step;
  }
  return undefined;
}

/** Add a stop once; a stop met again with a call id it lacked gets that id. */
function noteStop(found: StoppedToolCall[], error: CallStopError, callId: string | undefined): void {
  const known = found.findIndex((call) => call.error === error);
  if (known === -1) found.push({ key: error.key, tool: error.tool, callId, error });
  else if (found[known]?.callId === undefined && callId !== undefined) {
    found[known] = { ...(found[known] as StoppedToolCall), callId };
  }
}

/** Array items, then the SDK's own places, then `errors` items and `cause`. */
function childrenOf(search: Search, value: object): StopSearchChild[] {
  const children: StopSearchChild[] = [];
  if (Array.isArray(value)) for (const item of value) children.push({ value: item });
  if (search.childrenOf !== undefined) children.push(...search.childrenOf(value));
  const record = value as { errors?: unknown; cause?: unknown };
  if (Array.isArray(record.errors)) for (const item of record.errors) children.push({ value: item });
  if ('cause' in record) children.push({ value: record.cause });
  return children;
}
