import type { ToolRunnableConfig } from '@langchain/core/tools';
import { KeyDerivationError } from '@toolfence/core';

/**
 * A value taken from the options as given, or computed per call from the runnable config the
 * tool is invoked with (a LangGraph node's config carries `configurable`, `context`, `toolCall`).
 * A resolver that returns `undefined` means "none".
 */
export type ConfigValue = string | ((config: ToolRunnableConfig) => string | undefined);

/** Resolve a {@link ConfigValue} against the call's config. */
export function resolveConfigValue(
  value: ConfigValue | undefined,
  config: ToolRunnableConfig,
): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === 'function' ? value(config) : value;
}

/**
 * The run id of a call: the `runId` option (a string or a resolver) when given, else
 * `configurable.thread_id`, the LangGraph thread (what a checkpointer resumes).
 */
export function resolveRunId(
  option: ConfigValue | undefined,
  config: ToolRunnableConfig,
): string | undefined {
  if (option !== undefined) return resolveConfigValue(option, config);
  const threadId: unknown = config.configurable?.thread_id;
  if (typeof threadId === 'string' && threadId.length > 0) return threadId;
  if (typeof threadId === 'number' && Number.isFinite(threadId)) return String(threadId);
  return undefined;
}

const missingRunIds = new WeakSet<object>();

/**
 * The error for a `'run'`-scoped call without a run id, worded for LangChain users. Raised
 * before the guard is entered: the body does not run and nothing is claimed.
 */
export function missingRunIdError(tool: string): KeyDerivationError {
  const error = new KeyDerivationError(
    tool,
    "no run id for a 'run'-scoped key. Invoke the agent or graph with " +
      '`{ configurable: { thread_id } }` (the thread a checkpointer resumes), pass `runId` ' +
      '(a string or `(config) => string`) to fenceTool / fenceTools / toolfenceMiddleware, ' +
      "or give the policy `scope: 'tenant'` for a key that holds across runs",
  );
  missingRunIds.add(error);
  return error;
}

/** True for an error from {@link missingRunIdError}: a configuration error, not the model's. */
export function isMissingRunIdError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && missingRunIds.has(error);
}
