// The derivation of a key's canonical envelope (docs/key-spec.md): each part of the input read
// once, in a fixed order (tool, tenant, secret, arguments, scope and run id, key strategy and
// its inputs), checked, and written as canonical JSON; every refusal a KeyDerivationError.
import { nameProblem } from '../store/store-input.js';
import { describeThrown } from './canonical-json.js';
import { isPlainObject, pick } from './key-arguments.js';
import { describe, fail, isOurs, read, show } from './key-failure.js';
import { checkId, part, text } from './key-parts.js';
import { keySecret } from './key-secret.js';
import type { KeyInput } from './key-types.js';

/** The canonical envelope text, and the secret to hash it under (none: plain SHA-256). */
export interface Derivation {
  readonly text: string;
  readonly secret: Buffer | undefined;
}

/** Derives the envelope of `input`; the secret is read only `withSecret`. Throws only `KeyDerivationError`. */
export function derive(input: KeyInput, withSecret: boolean): Derivation {
  // The tool name once it is known, for the catch-all's error.
  const known = { tool: '(unknown)' };
  try {
    return deriveParts(input, withSecret, known);
  } catch (error) {
    if (isOurs(error)) throw error;
    // Not expected (every read of the input is guarded): whatever it is, the call fails closed.
    throw fail(known.tool, `deriving the key threw ${describeThrown(error)}`, { cause: error });
  }
}

function deriveParts(input: KeyInput, withSecret: boolean, known: { tool: string }): Derivation {
  if (input === null || (typeof input !== 'object' && typeof input !== 'function')) {
    throw fail(known.tool, `the key input must be an object, got ${show(input)}`, { field: 'input' });
  }
  const toolName = readTool(input, known);
  const tenant = read(input, 'tenant', toolName);
  const tenantProblem = nameProblem(tenant);
  if (tenantProblem !== undefined) {
    throw fail(toolName, `the tenant ${tenantProblem}, got ${show(tenant)}`, { field: 'tenant' });
  }
  let secret: Buffer | undefined;
  if (withSecret) {
    const given = read(input, 'secret', toolName);
    if (given !== undefined) secret = keySecret(toolName, given);
  }
  const argumentsObject = readArguments(input, toolName);
  const scopeText = scopePart(input, toolName);
  const argsText = argumentsPart(input, toolName, argumentsObject);
  return {
    text:
      '{"args":' +
      argsText +
      ',"scope":' +
      scopeText +
      ',"tenant":' +
      text(toolName, 'tenant', 'the tenant', tenant as string) +
      ',"tool":' +
      text(toolName, 'tool', 'the tool name', toolName) +
      ',"v":1}',
    secret,
  };
}

/** The tool name, checked as every store checks a name; recorded in `known` for later errors. */
function readTool(input: KeyInput, known: { tool: string }): string {
  const tool = read(input, 'tool', known.tool);
  const toolProblem = nameProblem(tool);
  if (toolProblem !== undefined) {
    throw fail(show(tool), `the tool name ${toolProblem}`, { field: 'tool' });
  }
  known.tool = tool as string;
  return tool as string;
}

/** The arguments, which must be a plain object. */
function readArguments(input: KeyInput, toolName: string): Record<string, unknown> {
  const args = read(input, 'arguments', toolName);
  let plain: boolean;
  try {
    plain = isPlainObject(args);
  } catch (cause) {
    throw fail(toolName, `reading the arguments threw ${describeThrown(cause)}`, {
      field: 'arguments',
      cause,
    });
  }
  if (!plain) {
    throw fail(toolName, `the arguments must be a plain object, got ${describe(args)}`, {
      field: 'arguments',
    });
  }
  return args as Record<string, unknown>;
}

/** The envelope's `scope`: the run id (scope 'run', the default) or `null` (scope 'tenant'). */
function scopePart(input: KeyInput, toolName: string): string {
  const scope = read(input, 'scope', toolName) ?? 'run';
  if (scope === 'run') {
    const runId = read(input, 'runId', toolName);
    if (typeof runId !== 'string' || runId.length === 0) {
      throw fail(
        toolName,
        `scope 'run' needs a non-empty run id, got ${show(runId)}; ` +
          "pass the run id, or use scope 'tenant' for a key that holds across runs",
        { field: 'runId' },
      );
    }
    checkId(toolName, 'runId', 'the run id', runId);
    return text(toolName, 'runId', 'the run id', runId);
  }
  if (scope === 'tenant') return 'null';
  throw fail(toolName, `the scope must be 'run' or 'tenant', got ${show(scope)}`, { field: 'scope' });
}

/** The envelope's `args`: the (key) arguments, the tool call id, or the business key. */
function argumentsPart(input: KeyInput, toolName: string, argumentsObject: Record<string, unknown>): string {
  const strategy = read(input, 'key', toolName) ?? 'arguments';
  const keyArguments = read(input, 'keyArguments', toolName);
  if (strategy !== 'arguments' && keyArguments !== undefined) {
    throw fail(toolName, "keyArguments applies only to the 'arguments' key strategy", {
      field: 'keyArguments',
    });
  }
  if (strategy === 'arguments') {
    const subset =
      keyArguments === undefined ? argumentsObject : pick(toolName, argumentsObject, keyArguments);
    return '{"arguments":' + part(toolName, 'arguments', 'the arguments', subset) + '}';
  }
  if (strategy === 'call') return callPart(input, toolName);
  if (typeof strategy === 'function') return businessPart(strategy, toolName, argumentsObject);
  throw fail(toolName, `the key must be 'arguments', 'call' or a function, got ${show(strategy)}`, {
    field: 'key',
  });
}

function callPart(input: KeyInput, toolName: string): string {
  const callId = read(input, 'callId', toolName);
  if (typeof callId !== 'string' || callId.length === 0) {
    throw fail(toolName, `key 'call' needs a non-empty tool call id, got ${show(callId)}`, {
      field: 'callId',
    });
  }
  checkId(toolName, 'callId', 'the tool call id', callId);
  return '{"call":' + text(toolName, 'callId', 'the call id', callId) + '}';
}

function businessPart(
  strategy: Function,
  toolName: string,
  argumentsObject: Record<string, unknown>,
): string {
  let business: unknown;
  try {
    business = (strategy as (a: Record<string, unknown>) => unknown)(argumentsObject);
  } catch (error) {
    throw fail(toolName, `the key function threw ${describeThrown(error)}`, { field: 'key', cause: error });
  }
  if (typeof business !== 'string' || business.length === 0) {
    throw fail(toolName, `the key function must return a non-empty string, got ${show(business)}`, {
      field: 'key',
    });
  }
  return '{"business":' + text(toolName, 'key', 'the business key', business) + '}';
}
