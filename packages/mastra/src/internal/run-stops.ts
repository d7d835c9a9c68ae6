import { AsyncLocalStorage } from 'node:async_hooks';
import type { CallStopError } from '@toolfence/core';
import { StepStoppedError } from '@toolfence/core';

// Mastra's agent loop turns a tool's error into a tool result and calls the model again. A run
// of a fenced agent carries this context, so a fenced tool's stop can end the run: it aborts the
// run's signal (Mastra leaves the loop) and the run rejects with the stop.
interface RunStops {
  readonly stops: { readonly error: CallStopError; readonly callId: string | undefined }[];
  readonly controller: AbortController;
}

const current = new AsyncLocalStorage<RunStops>();

/** Tell the fenced agent's run this call stopped; false outside one (the tool just throws). */
export function endRunWith(error: CallStopError, callId: string | undefined): boolean {
  const run = current.getStore();
  if (run === undefined) return false;
  run.stops.push({ error, callId });
  if (!run.controller.signal.aborted) run.controller.abort(error);
  return true;
}

/** Run `call` with a signal of its own (following `signal`); reject with the stops it saw. */
export async function stoppableRun<T>(
  signal: AbortSignal | undefined,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const follow = () => controller.abort(signal?.reason);
  if (signal?.aborted === true) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  const run: RunStops = { stops: [], controller };
  try {
    const result = await current.run(run, () => call(controller.signal));
    if (run.stops.length > 0) throw stopOf(run);
    return result;
  } catch (error) {
    if (run.stops.length > 0) throw stopOf(run);
    throw error;
  } finally {
    signal?.removeEventListener('abort', follow);
  }
}

function stopOf(run: RunStops): CallStopError | StepStoppedError {
  const [first, ...others] = run.stops;
  if (first !== undefined && others.length === 0) return first.error;
  return new StepStoppedError(
    run.stops.map(({ error, callId }) => ({
      key: error.key,
      tool: error.tool,
      callId: callId ?? error.callId,
      error,
    })),
  );
}
