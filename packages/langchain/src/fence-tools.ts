import type { StructuredToolInterface } from '@langchain/core/tools';
import { type Guard, PolicyError, type PolicyMap, type StopMode } from '@toolfence/core';
import { fenceTool, type ToolArguments } from './fence-tool.js';
import type { ConfigValue } from './internal/call-scope.js';

/**
 * A policy per tool name (core's `PolicyMap`), each typed by that tool's arguments where the
 * tools' names are literal types, as `tool(fn, { name: 'refund_order', … })` gives them.
 */
export type PoliciesFor<Tools extends readonly StructuredToolInterface[]> = PolicyMap<{
  [Name in Tools[number]['name']]: string extends Name
    ? // A tool whose name is typed `string`: its arguments cannot be told from the others'.
      Record<string, unknown>
    : ToolArguments<Extract<Tools[number], { name: Name }>>;
}>;

/** Options of {@link fenceTools}. */
export interface FenceToolsOptions<
  Tools extends readonly StructuredToolInterface[] = readonly StructuredToolInterface[],
> {
  readonly guard: Guard;
  /** A policy per tool name. A tool without one passes through unchanged. */
  readonly policies: PoliciesFor<Tools>;
  /** As in {@link FenceToolOptions.onIndeterminate}, for every fenced tool. */
  readonly onIndeterminate?: StopMode;
  /** As in {@link FenceToolOptions.tenant}. */
  readonly tenant?: ConfigValue;
  /** As in {@link FenceToolOptions.runId}. */
  readonly runId?: ConfigValue;
}

/**
 * Guard the tools of a list that have a policy (by tool name); the others, and tools that are
 * already guarded, are returned as they are (the same objects). The order and the tools' types
 * are kept.
 *
 * @example
 * ```ts
 * const agent = createAgent({
 *   model,
 *   tools: fenceTools([createTicket, searchDocs], {
 *     guard,
 *     policies: { create_ticket: { kind: Idempotency.EFFECTFUL } },
 *   }),
 * });
 * ```
 * @throws PolicyError at wrap time: a policy is invalid, names a key argument that is not a
 *   parameter of its tool, or names a tool that is not in the list (a typo would otherwise leave
 *   the tool unguarded).
 */
export function fenceTools<const Tools extends readonly StructuredToolInterface[]>(
  tools: Tools,
  options: FenceToolsOptions<Tools>,
): { -readonly [I in keyof Tools]: Tools[I] } {
  const { policies: policyTable, ...shared } = options;
  const policies = policyTable as PolicyMap;
  const names = new Set(tools.map((tool) => tool.name));
  for (const name of Object.keys(policies)) {
    if (!names.has(name) && policies[name] !== undefined) {
      throw new PolicyError(
        'policies',
        `name "${name}", which is not one of the tools (${[...names].join(', ')})`,
        {
          tool: name,
        },
      );
    }
  }
  return tools.map((tool) => {
    const policy = Object.hasOwn(policies, tool.name) ? policies[tool.name] : undefined;
    return policy === undefined ? tool : fenceTool(tool, { ...shared, policy } as never);
  }) as { -readonly [I in keyof Tools]: Tools[I] };
}
