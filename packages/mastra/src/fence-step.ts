import type { Step } from '@mastra/core/workflows';
import type { Guard } from '@toolfence/core';
import { bindResume } from './bind-resume.js';
import { nonRetryable } from './fence-tool.js';
import { isCallStopError } from './internal/stop-errors.js';
import { stopErrorOf } from './stop-error-of.js';

/** Any Mastra workflow step (made with `createStep`). */
export type MastraStep = Step<string, any, any, any, any, any, any, any>;

/** Options of {@link fenceStep}. */
export interface FenceStepOptions {
  /** The guard whose store records each suspended step's first resume. */
  readonly guard: Guard;
  /** Tenant of the records. Default: the guard's. */
  readonly tenant?: string | undefined;
}

/**
 * Bind a workflow step's suspend/resume to the call: the first `resumeData` a suspended run of
 * this step is resumed with (per run id, step id and the payload it suspended with) is recorded
 * in the guard's store, and every later resume of the same suspension gets that one. So an approval denied once stays denied
 * when the run is resumed again, concurrently or from a stale snapshot; and a step resumed by two
 * workers sees one decision. A toolfence stop thrown inside the step (a fenced tool called by
 * the step's own code) fails the step with Mastra's `MastraNonRetryableError`, so its `retries`
 * do not run the step again. Everything else about the step is the same object's.
 */
export function fenceStep<S extends MastraStep>(step: S, options: FenceStepOptions): S {
  if (step === null || typeof step !== 'object' || typeof step.execute !== 'function') {
    throw new TypeError('fenceStep needs a Mastra step (made with createStep({ ... }))');
  }
  if (options?.guard === undefined || typeof options.guard.run !== 'function') {
    throw new TypeError('fenceStep needs a guard');
  }
  const { guard, tenant } = options;
  const original = step.execute;
  const execute = async (params: Parameters<S['execute']>[0]) => {
    let given = params;
    if (params.resumeData !== undefined) {
      const resumeData = await bindResume(
        guard,
        { runId: params.runId, callId: step.id, suspendPayload: params.suspendData, tenant },
        params.resumeData,
      );
      given = { ...params, resumeData };
    }
    try {
      return await original(given);
    } catch (error) {
      if (isCallStopError(error)) throw nonRetryable(error);
      const inner = stopErrorOf(error);
      if (inner !== undefined && !isNonRetryable(error)) throw nonRetryable(inner);
      throw error;
    }
  };
  return { ...step, execute } as S;
}

function isNonRetryable(error: unknown): boolean {
  return (error as { isNonRetryable?: unknown } | null)?.isNonRetryable === true;
}
