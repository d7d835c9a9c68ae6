import type { Tool } from '@openai/agents-core';
import { type IdempotencyPolicy, PolicyError, type PolicyMap } from '@toolfence/core';
import { type FenceToolOptions, fenceTool, type ToolArguments } from './fence-tool.js';

/**
 * A policy per function tool name (core's `PolicyMap`), each typed by that tool's arguments, where the tools' names
 * are literal types (as `tool({ name: 'refund_payment', ... })` gives them with this package
 * imported: see `NamedFunctionTool`). A name that is no tool's, or a `keyArguments` entry that is
 * not an argument of its tool, is a compile error. A tool whose name is typed `string` (built
 * with a computed name) lets any name through: its policies are checked when you wrap.
 */
export type PoliciesFor<Tools extends readonly Tool<any>[]> = PolicyMap<{
  [Name in Extract<Tools[number], { type: 'function' }>['name']]: string extends Name
    ? Record<string, unknown>
    : ToolArguments<Extract<Tools[number], { type: 'function'; name: Name }>>;
}>;

/**
 * Options of {@link fenceTools}: those of {@link FenceToolOptions} (`guard`, `tenant`, `runId`,
 * `onIndeterminate`), for every fenced tool, with a policy per tool name in place of `policy`.
 */
export interface FenceToolsOptions<Tools extends readonly Tool<any>[] = readonly Tool<any>[]>
  extends Omit<FenceToolOptions, 'policy'> {
  /**
   * A policy per tool name (own properties only), typed by the tools ({@link PoliciesFor}). A
   * tool without one passes through unchanged.
   */
  readonly policies: PoliciesFor<Tools>;
}

/** The policy of a tool name: an own property of the table, never one inherited (`toString`). */
export function policyOf(policies: PolicyMap, name: string): IdempotencyPolicy | undefined {
  return Object.hasOwn(policies, name) ? policies[name] : undefined;
}

/** Throw `PolicyError` for a policy that names none of `names` (a typo leaves a tool unguarded). */
export function checkPolicyNames(policies: PolicyMap, names: ReadonlySet<string>): void {
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('policies must be an object: tool name -> policy');
  }
  for (const name of Object.keys(policies)) {
    if (!names.has(name) && policies[name] !== undefined) {
      throw new PolicyError(
        'policies',
        `name "${name}", which is not one of the tools (${[...names].join(', ')})`,
        { tool: name },
      );
    }
  }
}

/**
 * Guard the function tools of a list that have a policy (by tool name); the other tools (hosted
 * tools, MCP, tools without a policy) are returned as they are, the same objects, in the same
 * order.
 *
 * @throws PolicyError at wrap time: a policy is invalid, names a key argument its tool lacks,
 *   names a tool that is not in the list (or is not a function tool), or is `'run'`-scoped
 *   without a `runId` option.
 */
export function fenceTools<const Tools extends readonly Tool<any>[]>(
  tools: Tools,
  options: FenceToolsOptions<Tools>,
): { -readonly [I in keyof Tools]: Tools[I] } {
  const { policies: typed, ...shared } = options;
  const policies = typed as PolicyMap;
  const names = new Set(tools.filter((tool) => tool.type === 'function').map((tool) => tool.name));
  checkPolicyNames(policies, names);
  return tools.map((tool) => {
    if (tool.type !== 'function') return tool;
    const policy = policyOf(policies, tool.name);
    return policy === undefined ? tool : fenceTool(tool, { ...shared, policy });
  }) as { -readonly [I in keyof Tools]: Tools[I] };
}
