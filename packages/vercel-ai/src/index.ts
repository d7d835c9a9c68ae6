// The public API of @toolfence/vercel-ai. Named exports only; everything else is internal.

export {
  type CallValue,
  type FenceToolsOptions,
  fenceTools,
  type InputOf as ToolInputOf,
  isFencedTool,
  type PoliciesFor,
  type StoppedCall,
  type ToolExecuteOptions,
  type ToolfenceContext,
  toolfenceContext,
} from './fence-tools.js';
export { isSetupFault } from './setup-fault.js';
export { stopErrorOf } from './stop-error-of.js';
export {
  indeterminateErrorOf,
  type StepLike,
  type StopOnIndeterminateOptions,
  stopOnIndeterminate,
} from './stop-on-indeterminate.js';
