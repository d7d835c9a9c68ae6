// The public API of @toolfence/openai-agents. Named exports only.

export { type FenceAgentOptions, fenceAgent } from './fence-agent.js';
export {
  type FenceToolOptions,
  fenceTool,
  type RunContextValue,
  SDK_DEFAULT_TOOL_ERROR,
  type ToolArguments,
  ToolBodyFailedError,
  type ToolCallDetails,
} from './fence-tool.js';
export { type FenceToolsOptions, fenceTools, type PoliciesFor } from './fence-tools.js';
export {
  type RecordApprovalsOptions,
  type RecordedApproval,
  recordApprovals,
} from './record-approvals.js';
export { stopErrorOf } from './stop-error-of.js';
// Types only: the SDK's tool() keeps a literal tool name (an overload), so policy names are checked.
export type { NamedFunctionTool, ToolResultOf } from './tool-names.js';
