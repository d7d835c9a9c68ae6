// The public API of @toolfence/openai-agents. Named exports only.

export { type FenceAgentOptions, fenceAgent } from './fence-agent.js';
export {
  type FenceToolOptions,
  fenceTool,
  type OnIndeterminate,
  type RunContextValue,
  SDK_DEFAULT_TOOL_ERROR,
  ToolBodyFailedError,
  type ToolCallDetails,
} from './fence-tool.js';
export { type FenceToolsOptions, fenceTools, type PolicyTable } from './fence-tools.js';
export { isStopError, type StopError } from './internal/stop-errors.js';
export { stopErrorOf } from './stop-error-of.js';
