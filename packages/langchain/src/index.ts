// The public API of @toolfence/langchain. Named exports only.

export {
  type ConfigValue,
  FENCED_TOOL,
  type FencedTool,
  type FenceToolOptions,
  fenceTool,
  isFencedTool,
  type ToolArguments,
} from './fence-tool.js';
export { type FenceToolsOptions, fenceTools, type PoliciesFor } from './fence-tools.js';
export {
  type ApprovalAgent,
  type ApprovalDecisionInput,
  type RecordApprovalsOptions,
  type RecordedApproval,
  recordApprovals,
} from './record-approvals.js';
export { toolfenceRetryOn } from './retry-on.js';
export { stopErrorOf } from './stop-error-of.js';
export { type ToolfenceMiddlewareOptions, toolfenceMiddleware } from './toolfence-middleware.js';
