// The public API of @toolfence/vercel-ai. Named exports only; everything else is internal.

export {
  type CallValue,
  type FenceToolsOptions,
  fenceTools,
  type InputOf as ToolInputOf,
  isFencedTool,
  type StoppedCall,
  type ToolExecuteOptions,
  type ToolfenceContext,
  toolfenceContext,
} from './fence-tools.js';
export { isSetupFault } from './setup-fault.js';
export { type StopError, stopErrorOf } from './stop-error-of.js';
export {
  indeterminateErrorOf,
  type StepLike,
  type StopOnIndeterminateOptions,
  stopOnIndeterminate,
} from './stop-on-indeterminate.js';
export { isStoppingError, type StoppingError } from './stopping-error.js';
