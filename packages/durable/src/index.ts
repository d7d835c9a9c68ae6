// The public API of @toolfence/durable. Named exports only.

export { DEFAULT_STEP_POLICY, type GuardStepOptions, guardStep } from './guard-step.js';
export {
  type ApplicationFailureClass,
  type NonRetryableErrorClass,
  nonRetryableError,
  temporalNonRetryable,
} from './non-retryable.js';
export type { NonRetryableError, StepIdentity } from './step-identity.js';
export { stopErrorOf } from './stop-error-of.js';
export {
  type WorkflowDevKit,
  type WorkflowStepCall,
  type WorkflowStepGuardOptions,
  type WorkflowStepRunner,
  workflowStepGuard,
} from './workflow-devkit.js';
