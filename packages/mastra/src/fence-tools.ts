import { type IdempotencyPolicy, PolicyError, type PolicyMap } from '@toolfence/core';
import { type FenceToolOptions, fenceTool, type MastraTool, type ToolArguments } from './fence-tool.js';

/** A policy per tool name, untyped (core's `PolicyMap`). */
export type PolicyTable = PolicyMap;

/**
 * A policy per tool name (the keys of the agent's `tools` record, the names the model calls),
 * each typed by that tool's input: a name that is no tool's, or a `keyArguments` entry that is
 * not an input of its tool, is a compile error.
 */
export type PoliciesFor<Tools extends Readonly<Record<string, unknown>>> = PolicyMap<{
  [Name in keyof Tools & string]: Tools[Name] extends MastraTool ? ToolArguments<Tools[Name]> : never;
}>;

/**
 * Options of {@link fenceTools}: those of {@link FenceToolOptions} (`guard`, `tenant`, `runId`,
 * `onIndeterminate`) for every fenced tool, with a policy per tool name in place of `policy`.
 */
export interface FenceToolsOptions<Tools extends Readonly<Record<string, unknown>> = Record<string, unknown>>
  extends Omit<FenceToolOptions, 'policy'> {
  /** A policy per tool name (own properties only). A tool without one passes through unchanged. */
  readonly policies: PoliciesFor<Tools>;
}

/** The policy of a tool name: an own property of the table, never one inherited (`toString`). */
export function policyOf(policies: PolicyTable, name: string): IdempotencyPolicy | undefined {
  return Object.hasOwn(policies, name) ? policies[name] : undefined;
}

/** Throw `PolicyError` for a policy that names none of `names` (a typo leaves a tool unguarded). */
export function checkPolicyNames(policies: PolicyTable, names: ReadonlySet<string>): void {
  if (policies === null || typeof policies !== 'object') {
    throw new TypeError('policies must be an object: tool name -> policy');
  }
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
}

function isMastraTool(value: unknown): value is MastraTool {
  return value !== null && typeof value === 'object' && typeof (value as MastraTool).execute === 'function';
}

/**
 * Guard the tools of a Mastra tools record (what `new Agent({ tools })` takes) that have a
 * policy, by tool name; the other tools are kept as they are, the same objects under the same
 * names. Returns a new record.
 *
 * @throws PolicyError at wrap time: a policy is invalid, names a key argument its tool lacks, or
 *   names a tool that is not in the record.
 */
export function fenceTools<const Tools extends Readonly<Record<string, unknown>>>(
  tools: Tools,
  // NoInfer: the tools alone fix the names; a misspelt policy name is then an excess property.
  options: FenceToolsOptions<NoInfer<Tools>>,
): Tools {
  const { policies: typed, ...shared } = options;
  const policies = typed as unknown as PolicyTable;
  const names = new Set(Object.keys(tools).filter((name) => isMastraTool(tools[name])));
  checkPolicyNames(policies, names);
  const fenced: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const policy = policyOf(policies, name);
    fenced[name] =
      policy !== undefined && isMastraTool(tool) ? fenceTool(tool, { ...shared, policy } as never) : tool;
  }
  return fenced as Tools;
}
