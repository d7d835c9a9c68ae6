// The public API of @toolfence/mastra. Named exports only.

export { bindResume, RESUME_TOOL, type SuspendedCall } from './bind-resume.js';
export { type FenceAgentOptions, fenceAgent } from './fence-agent.js';
export { type FenceStepOptions, fenceStep, type MastraStep } from './fence-step.js';
export {
  type ContextValue,
  type FenceToolOptions,
  fenceTool,
  type MastraTool,
  type ToolArguments,
} from './fence-tool.js';
export { type FenceToolsOptions, fenceTools, type PoliciesFor } from './fence-tools.js';
export { stopErrorOf } from './stop-error-of.js';
