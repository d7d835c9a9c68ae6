import type { Agent } from '@mastra/core/agent';
import type { PolicyMap } from '@toolfence/core';
import { bindResume } from './bind-resume.js';
import type { FenceToolOptions } from './fence-tool.js';
import { checkPolicyNames, fenceTools, policyOf } from './fence-tools.js';
import { stoppableRun } from './internal/run-stops.js';

/**
 * Options of {@link fenceAgent}: those of `fenceTools`, with a policy table checked against the
 * agent's tools when a run resolves them (an `Agent`'s type does not say which tools it has; for
 * compile-time checks fence the record with `fenceTools` before making the agent).
 */
export interface FenceAgentOptions extends Omit<FenceToolOptions, 'policy'> {
  /** A policy per tool name (own properties only). A tool without one passes through unchanged. */
  readonly policies: PolicyMap;
}

type ResumeMethod = (
  resumeData: unknown,
  options?: { runId?: string; toolCallId?: string },
) => Promise<unknown>;

/**
 * Guard an existing Mastra `Agent` in one line: returns a fork of it (Mastra's own
 * `agent.__fork()`: the same config, Mastra instance and memory) whose tools that have a policy
 * are fenced ({@link fenceTool}), and whose resumes are bound to the call: the first decision
 * given for a suspended tool call (`approveToolCall` / `declineToolCall`, their `*Generate`
 * forms, `resumeStream` / `resumeGenerate` with `{ approved }`), per run id and tool call id
 * (the run alone when no `toolCallId` is given), is recorded in the guard's store and every later
 * resume of that call gets it; other resume data passes through. A call that was declined stays
 * declined when the run is resumed again. The agent you passed in is not changed; register the
 * fork with your `Mastra` instance (`agents: { support: fenceAgent(agent, options) }`).
 *
 * The agent's tools are resolved per call as Mastra resolves them (`agent.listTools`), so a
 * policy table is checked against them when a run first resolves them: a policy that names no
 * tool of the agent rejects that run with `PolicyError` (a typo would leave the tool unguarded).
 *
 * @throws TypeError when this version of `@mastra/core` has no `__fork` / `__setTools`.
 */
export function fenceAgent<A extends Agent<any, any, any, any>>(agent: A, options: FenceAgentOptions): A {
  const forkable = agent as unknown as {
    __fork?: () => A;
    __setTools?: (tools: unknown) => void;
  };
  if (typeof forkable?.__fork !== 'function' || typeof forkable.__setTools !== 'function') {
    throw new TypeError('fenceAgent needs a Mastra Agent (@mastra/core 1.x, with __fork and __setTools)');
  }
  const { policies, ...shared } = options;
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('policies must be an object: tool name -> policy');
  }
  const listTools = (
    agent as unknown as { listTools: (o?: unknown) => Promise<Record<string, unknown>> }
  ).listTools.bind(agent);
  const fenced = new WeakMap<object, unknown>();
  const fork = forkable.__fork();
  // The agent's own tools, resolved per call as Mastra resolves them (a record, or a function of
  // requestContext), each fenced once.
  (fork as unknown as { __setTools: (t: unknown) => void }).__setTools(
    async ({ requestContext }: { requestContext?: unknown }) => {
      const tools = await listTools({ requestContext });
      checkPolicyNames(policies, new Set(Object.keys(tools)));
      const result: Record<string, unknown> = {};
      for (const [name, tool] of Object.entries(tools)) {
        if (tool === null || typeof tool !== 'object' || policyOf(policies, name) === undefined) {
          result[name] = tool;
          continue;
        }
        if (!fenced.has(tool)) {
          fenced.set(
            tool,
            fenceTools({ [name]: tool }, {
              ...shared,
              policies: { [name]: policyOf(policies, name) },
            } as never)[name],
          );
        }
        result[name] = fenced.get(tool);
      }
      return result;
    },
  );
  bindResumes(fork, shared.guard, typeof shared.tenant === 'string' ? shared.tenant : undefined);
  endRunsOnStop(fork);
  return fork;
}

function bindResumes(agent: object, guard: FenceAgentOptions['guard'], tenant: string | undefined): void {
  const target = agent as Record<'resumeStream' | 'resumeGenerate', ResumeMethod>;
  for (const method of ['resumeStream', 'resumeGenerate'] as const) {
    const original = target[method].bind(agent);
    // An own property: approveToolCall and the others call this.resumeStream / resumeGenerate.
    Object.defineProperty(agent, method, {
      configurable: true,
      writable: true,
      value: async (resumeData: unknown, resumeOptions?: { runId?: string; toolCallId?: string }) => {
        const runId = resumeOptions?.runId;
        // Approval decisions only: a tool's own suspend/resume may ask several questions.
        if (typeof runId !== 'string' || runId === '' || !isApprovalDecision(resumeData)) {
          return original(resumeData, resumeOptions);
        }
        const callId = resumeOptions?.toolCallId ?? '';
        const bound = await bindResume(
          guard,
          { runId, callId: callId === '' ? 'run' : callId, tenant },
          resumeData,
        );
        return original(bound, resumeOptions);
      },
    });
  }
}

/** `{ approved: boolean, reason? }`: what approveToolCall / declineToolCall resume with. */
function isApprovalDecision(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { approved?: unknown }).approved === 'boolean'
  );
}

type RunMethod = (first: unknown, options?: { abortSignal?: AbortSignal }) => Promise<unknown>;

/**
 * `generate()` and `resumeGenerate()` (and so `approveToolCallGenerate()` /
 * `declineToolCallGenerate()`) reject with the stop when a fenced tool of the run stops
 * (`onIndeterminate: 'throw'`): the run's signal is aborted, so Mastra calls the model no more.
 */
function endRunsOnStop(agent: object): void {
  const target = agent as Record<'generate' | 'resumeGenerate', RunMethod>;
  for (const method of ['generate', 'resumeGenerate'] as const) {
    const original = target[method].bind(agent);
    Object.defineProperty(agent, method, {
      configurable: true,
      writable: true,
      value: (first: unknown, options?: { abortSignal?: AbortSignal }) =>
        stoppableRun(options?.abortSignal, (abortSignal) => original(first, { ...options, abortSignal })),
    });
  }
}
