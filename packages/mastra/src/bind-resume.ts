import { type Guard, Idempotency, type IdempotencyPolicy } from '@toolfence/core';

/** The tool name the first resume of a suspended call is recorded under. */
export const RESUME_TOOL = 'mastra.resume';

// IDEMPOTENT: recording a decision has no effect of its own; a lost holder may record it again.
const RESUME_POLICY: IdempotencyPolicy = { kind: Idempotency.IDEMPOTENT };

/** Which suspended call a resume answers: Mastra's run id and the step id or tool call id. */
export interface SuspendedCall {
  readonly runId: string;
  /** The workflow step id (`step: 'approve'`) or the agent's tool call id. */
  readonly callId: string;
  /**
   * What the call suspended with (a workflow step's `suspendData`): part of the record's key, so
   * a call that suspends again with another question gets its own answer.
   */
  readonly suspendPayload?: unknown;
  readonly tenant?: string | undefined;
}

/**
 * The resume data a suspended call is answered with: the FIRST one given for it, recorded once
 * in the guard's store. A later resume of the same call (a second worker, a retry, a stale
 * snapshot resumed after the run went on) gets the recorded answer, not its own: an approval that
 * was denied stays denied. The resume data must be JSON (the outcome codec's).
 */
export async function bindResume<T>(guard: Guard, call: SuspendedCall, resumeData: T): Promise<T> {
  return guard.run(
    {
      tool: RESUME_TOOL,
      arguments:
        call.suspendPayload === undefined
          ? { call: call.callId }
          : { call: call.callId, suspended: call.suspendPayload },
      runId: call.runId,
      tenant: call.tenant,
      policy: RESUME_POLICY,
    },
    async () => resumeData,
  );
}
