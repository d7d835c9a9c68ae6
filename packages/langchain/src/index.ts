// The public API of @toolfence/langchain. Named exports only.

export {
  type ConfigValue,
  FencedTool,
  type FenceToolOptions,
  fenceTool,
  type InputOf as ToolInputOf,
  type OnIndeterminate,
  type OutputOf as ToolOutputOf,
} from './fence-tool.js';
export { type FenceToolsOptions, fenceTools } from './fence-tools.js';
export { type ToolfenceMiddlewareOptions, toolfenceMiddleware } from './toolfence-middleware.js';
