// The public API of @toolfence/mcp. Named exports only; everything else is internal.

export { policyFromAnnotations, type ToolHints } from './annotation-policy.js';
export { mcpCallKey } from './call-key.js';
export { CLIENT_ACTION_ERROR_CODES, isClientActionError } from './client-action.js';
export { IDEMPOTENCY_KEY_PARAM, MAX_CLIENT_KEY_LENGTH } from './client-key.js';
export {
  type FenceMcpClientOptions,
  fenceMcpClient,
  type ListedTool,
  type McpToolPoliciesOptions,
  mcpToolPolicies,
  toolfenceCapabilityOf,
} from './fence-mcp-client.js';
export { fenceMcpServer } from './fence-mcp-server.js';
export {
  InvalidClientKeyError,
  isMcpServerNotRunError,
  McpServerNotRunError,
  NOT_RUN_META,
  type NotRunBody,
  notRunOf,
} from './not-run.js';
export { isReplayed, REPLAYED_META } from './replayed.js';
export { type IncompleteResultTest, isIncompleteResult } from './rounds.js';
export {
  DEFAULT_MCP_WAIT_TIMEOUT_MS,
  DEFAULT_WAIT_PROGRESS_MS,
  type FenceMcpServerOptions,
  type RequestValue,
  type StoppedServerCall,
  type ToolHandlerExtra,
} from './server-options.js';
export {
  DEFAULT_IDEMPOTENCY_KEY_META,
  type StoppedCallBody,
  stoppedCallOf,
  TOOLFENCE_CAPABILITY,
  type ToolfenceCapability,
  type ToolResultLike,
} from './stopped-result.js';
export {
  type ErrorResultHandling,
  type ErrorResultsOption,
  McpToolError,
  NO_EFFECT_META,
  NOT_RECORDED_META,
} from './tool-error.js';
