import { Agent, type FunctionTool, mcpToFunctionTool, tool } from '@openai/agents-core';
import { prepareFunctionToolInput, setFunctionToolPreparedInput } from '@openai/agents-core/utils/internal';

// The SDK keeps some facts about a function tool OUTSIDE the tool object, in module-private
// WeakMaps: the input parser `tool()` made (keyed by the tool's `invoke`: the runner parses a
// call with it BEFORE `needsApproval` and the guardrails, and hands the parsed input to the
// body), an MCP tool's server binding (keyed by `invoke` too) and the source agent of an
// `agent.asTool()` tool (keyed by the tool). A fenced tool has an `invoke` of its own, so without
// these entries the runner would treat it as a hand-built tool: `needsApproval` would get the
// model's raw JSON (no trim, no defaults, no coercion) and a policy that reads the normalised
// input would wave a call through. The SDK exports no way to register a tool;
// this module finds the maps by watching, once, what the SDK's own functions write, and copies
// the original's entries to the fenced tool: the SDK then sees the fenced tool as it sees the
// original.

type Registry = WeakMap<object, unknown>;

/** The SDK's per-call parsed input (what `prepareFunctionToolInput` returns). */
export type PreparedInput = NonNullable<ReturnType<typeof prepareFunctionToolInput>>;

/** The WeakMaps `act` writes the key it returns into; WeakMap#set is watched only during `act`. */
function registriesWriting(act: () => object): Registry[] {
  const writes: Array<readonly [Registry, object]> = [];
  const set = WeakMap.prototype.set;
  // Synchronous and restored before anything else can run: no other code sees the patch.
  WeakMap.prototype.set = function watchedSet(this: Registry, key: object, value: unknown) {
    writes.push([this, key]);
    return set.call(this, key, value);
  } as typeof set;
  let key: object;
  try {
    key = act();
  } catch {
    // A probe this SDK version refuses: that registry is not found (fenceTool then decides).
    return [];
  } finally {
    WeakMap.prototype.set = set;
  }
  return [...new Set(writes.filter(([, written]) => written === key).map(([registry]) => registry))];
}

function onlyOne(registries: Registry[]): Registry | undefined {
  return registries.length === 1 ? registries[0] : undefined;
}

interface Registries {
  /** `invoke` -> the parser registration of `tool()`; undefined if this SDK version hides it. */
  readonly parsers: Registry | undefined;
  /** Call details -> the input the runner parsed for that call. */
  readonly preparedInputs: Registry | undefined;
  /** `invoke` -> an MCP tool's server binding. */
  readonly mcpBindings: Registry | undefined;
  /** `agent.asTool()` tool -> its agent. */
  readonly agentSources: Registry | undefined;
}

let found: Registries | undefined;

function registries(): Registries {
  if (found !== undefined) return found;
  // Found on first use, not at import: the package has no import-time side effects.
  const probeSchema = {
    type: 'object' as const,
    properties: {},
    required: [] as string[],
    additionalProperties: false as const,
  };
  const probe = () =>
    tool({
      name: 'toolfence_probe',
      description: '',
      parameters: probeSchema,
      strict: true,
      execute: () => '',
    });
  const parsers = onlyOne(registriesWriting(() => probe().invoke));
  const preparedInputs = onlyOne(
    registriesWriting(() => {
      const details = {};
      setFunctionToolPreparedInput(details, {} as PreparedInput);
      return details;
    }),
  );
  const mcpBindings = onlyOne(
    registriesWriting(
      () =>
        mcpToFunctionTool(
          { name: 'toolfence_probe', description: '', inputSchema: probeSchema } as never,
          { name: 'toolfence_probe' } as never,
          true,
        ).invoke,
    ).filter((registry) => registry !== parsers),
  );
  const agentSources = onlyOne(
    registriesWriting(() =>
      new Agent({ name: 'toolfence_probe' }).asTool({ toolName: 'toolfence_probe', toolDescription: '' }),
    ),
  );
  found = { parsers, preparedInputs, mcpBindings, agentSources };
  return found;
}

/** True when `tool()` made this tool: the SDK has a parser for it (a hand-built tool has none). */
function hasSdkParser(original: FunctionTool<any, any, any>): boolean {
  try {
    return prepareFunctionToolInput(original, '{}') !== undefined;
  } catch {
    // Only a registered parser throws here (an async Standard Schema).
    return true;
  }
}

/**
 * Make the SDK see `fenced` as it sees `original`: the same input parser (so `needsApproval`,
 * guardrails and the body get the parsed input, parsed once), MCP binding and source agent.
 *
 * @throws TypeError when `original` was made by `tool()` but this version of the SDK keeps its
 *   parser where toolfence cannot find it: fencing it would let `needsApproval` see the raw
 *   input, so toolfence refuses rather than weaken an approval.
 */
export function carrySdkIdentity(
  original: FunctionTool<any, any, any>,
  fenced: FunctionTool<any, any, any>,
): void {
  const { parsers, mcpBindings, agentSources } = registries();
  if (parsers !== undefined) {
    // No entry: a hand-built tool, which the runner treats the same fenced or not.
    const registration = parsers.get(original.invoke);
    if (registration !== undefined) parsers.set(fenced.invoke, registration);
  } else if (hasSdkParser(original)) {
    throw new TypeError(
      `cannot fence tool "${original.name}": this version of @openai/agents-core keeps the tool's input ` +
        'parser where toolfence cannot find it, so needsApproval and guardrails would see the raw input ' +
        '(toolfence supports @openai/agents-core 0.20)',
    );
  }
  const binding = mcpBindings?.get(original.invoke);
  if (binding !== undefined) mcpBindings?.set(fenced.invoke, binding);
  const source = agentSources?.get(original);
  if (source !== undefined) agentSources?.set(fenced, source);
}

/**
 * The input the runner parsed for this call and will hand to the original's body, when it is
 * there for exactly this `input` and not consumed yet; else `undefined` (a direct `invoke`).
 */
export function preparedInputOf(
  original: FunctionTool<any, any, any>,
  input: string,
  details: object | undefined,
): PreparedInput | undefined {
  const { parsers, preparedInputs } = registries();
  if (details === undefined || preparedInputs === undefined) return undefined;
  const prepared = preparedInputs.get(details) as PreparedInput | undefined;
  const registration = parsers?.get(original.invoke) as { token?: unknown } | undefined;
  // The same test the body's `invoke` makes before it uses the prepared input.
  if (prepared === undefined || prepared.consumed || prepared.input !== input) return undefined;
  return registration !== undefined && prepared.token === registration.token ? prepared : undefined;
}
