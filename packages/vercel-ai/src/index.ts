// The public API of @toolfence/vercel-ai. Named exports only; everything else is internal.

export { fenceTools, isFencedTool, toolfenceContext } from './fence-tools.js';
export type {
  CallValue,
  FenceToolsOptions,
  InputOf as ToolInputOf,
  PoliciesFor,
  StoppedCall,
  ToolExecuteOptions,
  ToolfenceContext,
} from './fence-tools-options.js';
export {
  type RecordApprovalsOptions,
  type RecordedApproval,
  recordApprovals,
} from './record-approvals.js';
export { isSetupFault } from './setup-fault.js';
export { stopErrorOf } from './stop-error-of.js';
export {
  indeterminateErrorOf,
  type StepLike,
  type StopOnIndeterminateOptions,
  stopOnIndeterminate,
} from './stop-on-indeterminate.js';
