import type { Guard, GuardedBody, IdempotencyPolicy } from '@toolfence/core';
import { guardStep } from './guard-step.js';
import { nonRetryableError } from './non-retryable.js';

/**
 * What {@link workflowStepGuard} takes from the `workflow` package (Vercel's Workflow DevKit),
 * passed in so this package does not import the engine: its step metadata, its run metadata
 * and its `FatalError`.
 */
export interface WorkflowDevKit {
  /** `getStepMetadata` from `workflow`: `stepId` is stable across the step's retries. */
  readonly getStepMetadata: () => { readonly stepId: string; readonly stepName: string };
  /** `getWorkflowMetadata` from `workflow`. */
  readonly getWorkflowMetadata: () => { readonly workflowRunId: string };
  /** `FatalError` from `workflow`: a step that throws it fails without a retry. */
  readonly FatalError: new (
    message: string,
  ) => Error;
}

/** Options of {@link workflowStepGuard}. */
export interface WorkflowStepGuardOptions extends WorkflowDevKit {
  /** The guard (and through it the store) every deployment of the workflow shares. */
  readonly guard: Guard;
  /** Tenant of every step. Default: the guard's. */
  readonly tenant?: string | undefined;
}

/** One guarded step: its input, its policy, its name. */
export interface WorkflowStepCall {
  /** The step's input, fingerprinted (see `GuardStepOptions.arguments`). Default `{}`. */
  readonly arguments?: Record<string, unknown> | undefined;
  /** Default `DEFAULT_STEP_POLICY` (EFFECTFUL, keyed by the step id). */
  readonly policy?: IdempotencyPolicy | undefined;
  /** The name recorded for the step. Default: the engine's `stepName` (`step//<file>//<function>`). */
  readonly name?: string | undefined;
  readonly signal?: AbortSignal | undefined;
}

/** Runs the guarded body of the `"use step"` function it is called in. */
export type WorkflowStepRunner = <T>(call: WorkflowStepCall, body: GuardedBody<T>) => Promise<T>;

/**
 * Guard the effects of Workflow DevKit steps. Call the runner it returns inside a `"use step"`
 * function (a DurableAgent tool's `execute` marked `"use step"` included): it reads the step's
 * identity from the engine (`workflowRunId`, `stepId`), runs the body once for it across the
 * engine's retries and duplicate deliveries (a twin waits and gets the same result), and turns
 * toolfence's stops into `FatalError`, so the engine fails the step instead of retrying it.
 *
 * @example
 * ```ts
 * const fenced = workflowStepGuard({ guard, getStepMetadata, getWorkflowMetadata, FatalError });
 * async function chargeCard(orderId: string, cents: number) {
 *   'use step';
 *   return fenced({ arguments: { orderId, cents } }, ({ idempotencyKey }) => payments.charge(orderId, cents, idempotencyKey));
 * }
 * ```
 * @throws TypeError (at once) when an engine function or the guard is missing; (from the runner)
 *   when it is not called inside a step (the engine's own error).
 */
export function workflowStepGuard(options: WorkflowStepGuardOptions): WorkflowStepRunner {
  const { guard, getStepMetadata, getWorkflowMetadata, FatalError } = options ?? {};
  if (guard === undefined || typeof guard.run !== 'function') {
    throw new TypeError('workflowStepGuard needs a guard');
  }
  for (const [name, value] of Object.entries({ getStepMetadata, getWorkflowMetadata, FatalError })) {
    if (typeof value !== 'function') throw new TypeError(`workflowStepGuard needs ${name} from "workflow"`);
  }
  const nonRetryable = nonRetryableError(FatalError);
  const tenant = options.tenant;
  return <T>(call: WorkflowStepCall, body: GuardedBody<T>): Promise<T> => {
    const step = getStepMetadata();
    const run = getWorkflowMetadata();
    return guardStep(
      {
        guard,
        step: { runId: run.workflowRunId, stepId: step.stepId },
        name: call?.name ?? step.stepName,
        arguments: call?.arguments,
        policy: call?.policy,
        tenant,
        signal: call?.signal,
        nonRetryable,
      },
      body,
    );
  };
}
