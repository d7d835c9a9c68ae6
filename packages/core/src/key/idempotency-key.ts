import { createHash } from 'node:crypto';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import type { KeyScope, KeyStrategy } from '../policy/idempotency-policy.js';
import { canonicalJson } from './canonical-json.js';

/** What {@link idempotencyKey} derives a key from. */
export interface KeyInput {
  /** The tenant the call belongs to. Non-empty. Keys of two tenants never coincide. */
  tenant: string;
  /** The agent run. Required (non-empty) for scope `'run'`; ignored for scope `'tenant'`. */
  runId?: string | undefined;
  /** The tool's name. Non-empty. */
  tool: string;
  /** The call's arguments: a plain object (prototype `Object.prototype` or `null`). */
  arguments: Record<string, unknown>;
  /**
   * For the `'arguments'` strategy: the arguments the key is made of (default: all of them).
   * Each named argument must be present and not `undefined`.
   */
  keyArguments?: readonly string[] | undefined;
  /** Default `'arguments'`. See {@link KeyStrategy}. */
  key?: KeyStrategy | undefined;
  /** Default `'run'`. See {@link KeyScope}. */
  scope?: KeyScope | undefined;
  /** The SDK's tool call id; required (non-empty) for the `'call'` strategy, unused otherwise. */
  callId?: string | undefined;
}

/**
 * Derive the idempotency key of a tool call.
 *
 * The key is the lowercase hex SHA-256 (FIPS 180-4; 64 characters) of the UTF-8 bytes of
 * {@link canonicalJson} (RFC 8785 + NFC) applied to the envelope
 *
 * ```
 * { "v": 1, "tenant": tenant, "scope": runId | null, "tool": tool, "args": args }
 * ```
 *
 * - `scope` is the run id for scope `'run'` (the default) and `null` for scope `'tenant'`.
 * - `args` is an object with exactly one member, whose name says how the key was made, so keys of
 *   different strategies can never coincide (domain separation):
 *   - `{ "arguments": {...} }` for the `'arguments'` strategy (the default): the arguments named
 *     by `keyArguments`, or all of them;
 *   - `{ "call": callId }` for the `'call'` strategy;
 *   - `{ "business": key(arguments) }` for a function key.
 *
 * Argument values: a present `null`, `""`, `[]` and `{}` are values and give four different keys.
 * An argument that is absent and one that is `undefined` are the same (as in `JSON.stringify`):
 * omitted when all arguments make the key, refused when named by `keyArguments`. The full
 * specification, with test vectors, is `docs/key-spec.md` and `test/vectors/keys.json`.
 *
 * @param input the call; see {@link KeyInput}.
 * @returns 64 lowercase hex characters.
 * @throws KeyDerivationError naming `input.tool` (the call must fail closed, its body not run) when
 *   - `tenant` or `tool` is not a non-empty string;
 *   - `arguments` is not a plain object;
 *   - `scope` is neither `'run'` nor `'tenant'`, or `key` is not `'arguments'`, `'call'` or a
 *     function;
 *   - scope `'run'` is used without a non-empty `runId` (a key without its run would be shared
 *     by every run: refused rather than guessed);
 *   - a name in `keyArguments` is absent from the arguments or `undefined` (the error's
 *     `argument` names it), `keyArguments` is empty or holds a non-string or empty name, or it is
 *     given with a `'call'` or function key;
 *   - `key: 'call'` is used without a non-empty `callId`;
 *   - a function key throws (kept as `cause`) or returns anything but a non-empty string;
 *   - a value cannot be canonicalized: the `CanonicalizationError` is the `cause`, and its path
 *     (relative to the arguments, for an argument value) is in the message;
 *   - reading a value threw (a getter or Proxy trap): that error is the `cause`.
 */
export function idempotencyKey(input: KeyInput): string {
  return sha256Hex(canonicalEnvelope(input));
}

/**
 * The canonical envelope text whose SHA-256 is the key (see {@link idempotencyKey}). The parts are
 * canonicalized apart so an error's path is relative to the arguments; the text equals
 * `canonicalJson({ v: 1, tenant, scope, tool, args })`, members in RFC 8785 order
 * (`args` < `scope` < `tenant` < `tool` < `v`).
 *
 * @throws KeyDerivationError as {@link idempotencyKey}.
 * @internal exported for the test vectors.
 */
export function canonicalEnvelope(input: KeyInput): string {
  const tool: unknown = input.tool;
  if (typeof tool !== 'string' || tool.length === 0) {
    throw new KeyDerivationError(show(tool), `the tool name must be a non-empty string, got ${show(tool)}`);
  }
  const tenant: unknown = input.tenant;
  if (typeof tenant !== 'string' || tenant.length === 0) {
    throw new KeyDerivationError(tool, `the tenant must be a non-empty string, got ${show(tenant)}`);
  }
  const args: unknown = input.arguments;
  if (!isPlainObject(args)) {
    throw new KeyDerivationError(tool, `the arguments must be a plain object, got ${describe(args)}`);
  }

  const scope: unknown = input.scope ?? 'run';
  let scopeText: string;
  if (scope === 'run') {
    const runId: unknown = input.runId;
    if (typeof runId !== 'string' || runId.length === 0) {
      throw new KeyDerivationError(
        tool,
        `scope 'run' needs a non-empty run id, got ${show(runId)}; ` +
          "pass the run id, or use scope 'tenant' for a key that holds across runs",
      );
    }
    scopeText = text(tool, 'the run id', runId);
  } else if (scope === 'tenant') {
    scopeText = 'null';
  } else {
    throw new KeyDerivationError(tool, `the scope must be 'run' or 'tenant', got ${show(scope)}`);
  }

  const strategy: unknown = input.key ?? 'arguments';
  const keyArguments: unknown = input.keyArguments;
  if (strategy !== 'arguments' && keyArguments !== undefined) {
    throw new KeyDerivationError(tool, "keyArguments applies only to the 'arguments' key strategy");
  }
  let argsText: string;
  if (strategy === 'arguments') {
    const subset = keyArguments === undefined ? args : pick(tool, args, keyArguments);
    argsText = '{"arguments":' + part(tool, 'the arguments', subset) + '}';
  } else if (strategy === 'call') {
    const callId: unknown = input.callId;
    if (typeof callId !== 'string' || callId.length === 0) {
      throw new KeyDerivationError(tool, `key 'call' needs a non-empty tool call id, got ${show(callId)}`);
    }
    argsText = '{"call":' + text(tool, 'the call id', callId) + '}';
  } else if (typeof strategy === 'function') {
    let business: unknown;
    try {
      business = (strategy as (a: Record<string, unknown>) => unknown)(args);
    } catch (error) {
      throw new KeyDerivationError(tool, 'the key function threw', { cause: error });
    }
    if (typeof business !== 'string' || business.length === 0) {
      throw new KeyDerivationError(
        tool,
        `the key function must return a non-empty string, got ${show(business)}`,
      );
    }
    argsText = '{"business":' + text(tool, 'the business key', business) + '}';
  } else {
    throw new KeyDerivationError(
      tool,
      `the key must be 'arguments', 'call' or a function, got ${show(strategy)}`,
    );
  }

  return (
    '{"args":' +
    argsText +
    ',"scope":' +
    scopeText +
    ',"tenant":' +
    text(tool, 'the tenant', tenant) +
    ',"tool":' +
    text(tool, 'the tool name', tool) +
    ',"v":1}'
  );
}

/**
 * The fingerprint of a call's full arguments, for conflict detection: the lowercase hex SHA-256
 * (64 characters) of the UTF-8 bytes of `canonicalJson(args)`. Two argument objects have the same
 * fingerprint exactly when they have the same canonical JSON (RFC 8785 + NFC).
 *
 * @param args any value `canonicalJson` accepts; normally the call's arguments object.
 * @throws CanonicalizationError as {@link canonicalJson} (path relative to `args`).
 */
export function argumentsFingerprint(args: unknown): string {
  return sha256Hex(canonicalJson(args));
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The key arguments of `args`, in a null-prototype object (so `__proto__` is an ordinary name). */
function pick(tool: string, args: Record<string, unknown>, names: unknown): Record<string, unknown> {
  if (!Array.isArray(names)) {
    throw new KeyDerivationError(
      tool,
      `keyArguments must be an array of argument names, got ${describe(names)}`,
    );
  }
  if (names.length === 0) {
    throw new KeyDerivationError(
      tool,
      'keyArguments is empty: the key would name no argument and merge every call of the tool; ' +
        'name the arguments, or use a function key for a fixed business key',
    );
  }
  const subset: Record<string, unknown> = Object.create(null);
  for (const name of names as unknown[]) {
    if (typeof name !== 'string' || name.length === 0) {
      throw new KeyDerivationError(tool, `keyArguments must hold non-empty names, got ${show(name)}`);
    }
    let value: unknown;
    try {
      value = Object.hasOwn(args, name) ? args[name] : undefined;
    } catch (cause) {
      throw new KeyDerivationError(tool, `reading the key argument "${name}" threw`, {
        argument: name,
        cause,
      });
    }
    if (value === undefined) {
      throw new KeyDerivationError(
        tool,
        `the key argument "${name}" is ${Object.hasOwn(args, name) ? 'undefined' : 'missing'}; ` +
          'the call cannot be told apart from other calls, so it is refused',
        { argument: name },
      );
    }
    subset[name] = value;
  }
  return subset;
}

/**
 * Printable ASCII other than `"` and `\`: a string of these is its own NFC form and needs no
 * escaping (RFC 8785 section 3.2.2.2), so its canonical JSON is the string in quotes.
 */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `canonicalJson(value)` of a string, with a fast path for the common plain ASCII ids. */
function text(tool: string, what: string, value: string): string {
  return PLAIN_ASCII.test(value) ? '"' + value + '"' : part(tool, what, value);
}

/** `canonicalJson(value)`, any error it throws turned into a `KeyDerivationError` (kept as `cause`). */
function part(tool: string, what: string, value: unknown): string {
  try {
    return canonicalJson(value);
  } catch (error) {
    if (CanonicalizationError.isInstance(error)) {
      const where = error.path === '' ? '' : ` at "${error.path}"`;
      const prefix = `Cannot canonicalize the value at "${error.path}": `;
      const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      throw new KeyDerivationError(tool, `${what} cannot be canonicalized${where}: ${reason}`, {
        cause: error,
      });
    }
    // A getter or Proxy trap that threw while the value was read: the key is underivable too.
    const message = error instanceof Error ? error.message : String(error);
    throw new KeyDerivationError(tool, `${what} could not be read: ${message}`, { cause: error });
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor
      ?.name;
    return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'an object';
  }
  return show(value);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object';
  return String(value);
}
