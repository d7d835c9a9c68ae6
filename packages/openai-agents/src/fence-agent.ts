import { Agent, Handoff } from '@openai/agents-core';
import { type IdempotencyPolicy, PolicyError, type PolicyMap } from '@toolfence/core';
import type { FenceToolOptions } from './fence-tool.js';
import { unfencedToolOf } from './fence-tool.js';
import { fenceTools, policyOf } from './fence-tools.js';

/**
 * Options of {@link fenceAgent}: those of `fenceTools`, with one policy table for every agent
 * reachable by handoffs. An `Agent`'s type does not say which tools it has, so the table's names
 * are checked when you wrap (a `PolicyError`), not at compile time: for compile-time checks, fence
 * the tool list with `fenceTools` before making the agent.
 */
export interface FenceAgentOptions extends Omit<FenceToolOptions, 'policy'> {
  /** A policy per tool name (own properties only). A tool without one passes through unchanged. */
  readonly policies: PolicyMap;
}

/**
 * Guard an existing `Agent` without rewriting it: returns a clone (`agent.clone({ tools,
 * handoffs })`) whose function tools that have a policy are fenced ({@link fenceTool}), and whose
 * handoffs lead to clones guarded the same way, transitively (cycles included: an agent reached
 * twice is cloned once). The agents you passed in are not changed.
 *
 * An agent used as a tool (`inner.asTool()`) is a function tool like any other: a policy under
 * its tool name guards the call of the whole inner run. The tools INSIDE it are not reached: the
 * SDK keeps the inner agent in the tool's closure (its registry is internal). Fence the inner
 * agent before making the tool of it: `fenceAgent(inner, options).asTool({ ... })`.
 *
 * @throws PolicyError when a policy names no function tool of any reachable agent (a typo would
 *   leave the real tool unguarded), or for any reason {@link fenceTools} gives.
 */
export function fenceAgent<A extends Agent<any, any>>(agent: A, options: FenceAgentOptions): A {
  if (!(agent instanceof Agent)) throw new TypeError('fenceAgent needs an Agent');
  const clones = new Map<Agent<any, any>, Agent<any, any>>();
  const names = new Set<string>();
  const visit = (source: Agent<any, any>): Agent<any, any> => {
    const known = clones.get(source);
    if (known !== undefined) return known;
    for (const tool of source.tools) if (tool.type === 'function') names.add(tool.name);
    // Policies are checked against all agents at the end, so fence each list with its own names.
    const own = Object.fromEntries(
      source.tools
        .filter((tool) => tool.type === 'function' && policyOf(options.policies, tool.name) !== undefined)
        .map((tool) => [tool.name, policyOf(options.policies, tool.name) as IdempotencyPolicy]),
    );
    const tools = fenceTools(
      source.tools.map((tool) => (tool.type === 'function' ? (unfencedToolOf(tool) ?? tool) : tool)),
      { ...options, policies: own } as never,
    );
    const clone = source.clone({ tools });
    clones.set(source, clone);
    // Set after the clone is registered, so a handoff back to an agent already seen finds it.
    clone.handoffs = source.handoffs.map((entry) =>
      entry instanceof Handoff ? entry.clone({ agent: visit(entry.agent) }) : visit(entry),
    );
    return clone;
  };
  const fenced = visit(agent);
  for (const name of Object.keys(options.policies)) {
    if (!names.has(name) && options.policies[name] !== undefined) {
      throw new PolicyError(
        'policies',
        `name "${name}", which is not a function tool of "${agent.name}" or of any agent it hands off to (${[...names].join(', ')})`,
        { tool: name },
      );
    }
  }
  return fenced as A;
}
