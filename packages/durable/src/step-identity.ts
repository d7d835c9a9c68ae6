// The vocabulary the engine helpers share. A leaf: it imports nothing of its siblings.
import type { CallStopError } from '@toolfence/core';

/**
 * The engine's own identity of one step: the same for every retry of the step and for every
 * twin delivery of it, so it keys the step's effect. What each engine calls it:
 *
 * | engine | `runId` | `stepId` |
 * |---|---|---|
 * | Workflow DevKit | `getWorkflowMetadata().workflowRunId` | `getStepMetadata().stepId` |
 * | Temporal activity | `Context.current().info.workflowExecution.runId` (or `workflowId`) | `info.activityId` |
 * | Inngest `step.run` | `event.id` or `runId` | the step's id (its first argument) |
 * | Restate `ctx.run` | `ctx.request().id` (the invocation id) | the action's name |
 * | LangGraph `task()` | `configurable.thread_id` | the task's name and its place in the entrypoint |
 */
export interface StepIdentity {
  /** The run (workflow run, execution, invocation, thread) the step belongs to. */
  readonly runId: string;
  /** The step within the run, stable across the engine's retries and duplicate deliveries. */
  readonly stepId: string;
}

/**
 * Makes the engine's non-retryable error from a toolfence stop (an `IndeterminateOutcomeError`
 * or `ExecutionAbandonedError`), so the engine fails the step instead of running it again. The
 * error it returns should keep the stop as its `cause` (`stopErrorOf` finds it there).
 */
export type NonRetryableError = (stop: CallStopError) => Error;
