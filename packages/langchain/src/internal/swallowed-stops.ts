import { ToolMessage } from '@langchain/core/messages';
import { type Guard, StepStoppedError } from '@toolfence/core';
import { stopOriginOf } from '../fence-tool.js';

/** How many stopped calls {@link SwallowedStops} remembers (the oldest is forgotten first). */
const REMEMBERED_STOPS = 1000;

/**
 * The stops of this process's calls, by thread and tool call id, until the call settles. A
 * retry layer OUTSIDE the middleware (`[toolRetryMiddleware(), toolfenceMiddleware(...)]`) turns
 * the stop it receives into a ToolMessage and lets the run go on; the next model call would read
 * "failed" about a call that may have happened. So a model call whose messages hold the answer to
 * such a call is refused with the stop while the guard's record of it is unsettled.
 */
export class SwallowedStops {
  private readonly stops = new Map<string, Error>();

  constructor(private readonly guard: Guard) {}

  record(thread: string, callId: string | undefined, error: Error): void {
    if (callId === undefined) return;
    const key = JSON.stringify([thread, callId]);
    this.stops.delete(key);
    this.stops.set(key, error);
    if (this.stops.size > REMEMBERED_STOPS) this.stops.delete(this.stops.keys().next().value as string);
  }

  forget(thread: string, callId: string | undefined): void {
    if (callId !== undefined) this.stops.delete(JSON.stringify([thread, callId]));
  }

  /** Throw the stop of a call answered in `messages` whose record is still unsettled. */
  async throwIfSwallowed(thread: string, messages: readonly unknown[]): Promise<void> {
    if (this.stops.size === 0) return;
    for (const message of messages) {
      if (!ToolMessage.isInstance(message)) continue;
      const key = JSON.stringify([thread, message.tool_call_id]);
      const stop = this.stops.get(key);
      if (stop === undefined) continue;
      if (await this.unsettled(stop)) throw stop;
      // An operator settled it (or released it): the conversation may go on.
      this.stops.delete(key);
    }
  }

  private async unsettled(error: Error): Promise<boolean> {
    const stop = error as Parameters<typeof StepStoppedError.callsOf>[0];
    for (const call of StepStoppedError.callsOf(stop)) {
      // The fenced tool that threw it knows its guard and tenant (its own, for a tool fenced
      // before it reached the middleware).
      const origin = stopOriginOf(call.error) ?? { guard: this.guard, tenant: undefined };
      try {
        const record = await origin.guard.inspect(
          call.key,
          origin.tenant === undefined ? {} : { tenant: origin.tenant },
        );
        if (record !== null && record.state !== 'completed') return true;
      } catch {
        // The store cannot say: stay stopped rather than let the model read "failed".
        return true;
      }
    }
    return false;
  }
}
