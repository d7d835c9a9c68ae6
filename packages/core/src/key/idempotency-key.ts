import * as cryptoModule from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';
import { isUint8Array } from 'node:util/types';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import type { KeyScope, KeyStrategy } from '../policy/idempotency-policy.js';
import { isWellFormedText, nameProblem } from '../store/store-input.js';
import { canonicalJson, describeThrown } from './canonical-json.js';

/**
 * Longest run id and tool call id, in UTF-16 code units. They are only hashed, never stored, but
 * unbounded they would let a caller make every key derivation hash megabytes.
 */
export const MAX_ID_LENGTH = 1024;

/** Shortest key secret, in bytes (a string counts its UTF-8 bytes): the size of the HMAC-SHA-256 output. */
export const MIN_KEY_SECRET_BYTES = 32;

/**
 * A secret for keyed keys and fingerprints (HMAC-SHA-256, docs/key-spec.md section 6): at least
 * {@link MIN_KEY_SECRET_BYTES} bytes. A `Uint8Array` (a `Buffer` is one) is used byte for byte; a
 * string is used as its UTF-8 bytes, as written (not decoded from hex or base64, not normalised),
 * and must be well-formed Unicode. Generate one with `crypto.randomBytes(32)`.
 */
export type KeySecret = string | Uint8Array;

/** What {@link idempotencyKey} derives a key from. */
export interface KeyInput {
  /**
   * The tenant the call belongs to. Keys of two tenants never coincide. A name every store
   * accepts: non-empty, at most 256 code units, no NUL, well-formed Unicode.
   */
  tenant: string;
  /**
   * The agent run. Required for scope `'run'` (non-empty, at most {@link MAX_ID_LENGTH} code
   * units, well-formed Unicode); ignored for scope `'tenant'`.
   */
  runId?: string | undefined;
  /** The tool's name. The same rules as `tenant`. */
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
  /**
   * The SDK's tool call id; required for the `'call'` strategy (the same rules as `runId`),
   * unused otherwise.
   */
  callId?: string | undefined;
  /**
   * The secret of keyed mode: when given, the key is an HMAC-SHA-256 under it instead of a
   * SHA-256 (docs/key-spec.md section 6). One secret: it is the one the key is made (and claimed)
   * with. Absent (`undefined`): unkeyed mode.
   */
  secret?: KeySecret | undefined;
}

/** Options of {@link argumentsFingerprint}. */
export interface FingerprintOptions {
  /** The secret of keyed mode (see {@link KeyInput.secret}); absent: unkeyed (SHA-256). */
  secret?: KeySecret | undefined;
}

/**
 * Derive the idempotency key of a tool call.
 *
 * The key is 64 lowercase hex characters: the SHA-256 (FIPS 180-4) of the UTF-8 bytes of
 * {@link canonicalJson} (RFC 8785 + NFC) applied to the envelope
 *
 * ```
 * { "v": 1, "tenant": tenant, "scope": runId | null, "tool": tool, "args": args }
 * ```
 *
 * or, in keyed mode (`secret` given), the HMAC-SHA-256 (RFC 2104) of the same bytes under the
 * secret. An unkeyed and a keyed key of any two calls coincide only if SHA-256 collides.
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
 * @throws KeyDerivationError naming `input.tool` and, where one is at fault, the `field` of the
 *   input (the call must fail closed, its body not run). Nothing else is thrown, whatever the
 *   input. Refused:
 *   - an input that is not an object, or a member of it that cannot be read (`cause`);
 *   - a `tenant` or `tool` no store accepts: not a string, empty, longer than 256 code units,
 *     holding NUL, or not well-formed Unicode (the store limits, `nameProblem`);
 *   - `arguments` that is not a plain object;
 *   - `scope` neither `'run'` nor `'tenant'`, or `key` not `'arguments'`, `'call'` or a function;
 *   - scope `'run'` without a run id, or `key: 'call'` without a call id: each must be a
 *     non-empty, well-formed string of at most {@link MAX_ID_LENGTH} code units;
 *   - a name in `keyArguments` that is absent from the arguments or `undefined` (the error's
 *     `argument` names it), `keyArguments` that is empty or holds a non-string or empty name, or
 *     that is given with a `'call'` or function key;
 *   - a function key that throws (kept as `cause`) or returns anything but a non-empty string;
 *   - a value that cannot be canonicalized, or whose reading threw (a getter, a Proxy trap): the
 *     `CanonicalizationError` is the `cause` (its own `cause` is what was thrown), its path
 *     (relative to the arguments) is in the message;
 *   - a `secret` that is not a string or Uint8Array of at least {@link MIN_KEY_SECRET_BYTES}
 *     bytes (a string: well-formed Unicode).
 */
export function idempotencyKey(input: KeyInput): string {
  const derivation = derive(input, true);
  return digest(derivation.text, derivation.secret);
}

/**
 * The canonical envelope text whose SHA-256 (or HMAC) is the key (see {@link idempotencyKey}).
 * The parts are canonicalized apart so an error's path is relative to the arguments; the text
 * equals `canonicalJson({ v: 1, tenant, scope, tool, args })`, members in RFC 8785 order
 * (`args` < `scope` < `tenant` < `tool` < `v`). The secret is not read.
 *
 * @throws KeyDerivationError as {@link idempotencyKey}.
 * @internal exported for the test vectors.
 */
export function canonicalEnvelope(input: KeyInput): string {
  return derive(input, false).text;
}

/**
 * The fingerprint of a call's full arguments, for conflict detection: 64 lowercase hex
 * characters, the SHA-256 of the UTF-8 bytes of `canonicalJson(args)` or, with `options.secret`,
 * their HMAC-SHA-256 under the secret (docs/key-spec.md sections 4 and 6). Two argument objects
 * have the same fingerprint exactly when they have the same canonical JSON (RFC 8785 + NFC).
 * Unkeyed, a fingerprint of low-entropy arguments (a PIN among known others) can be reversed by
 * trying every value; keyed, not without the secret.
 *
 * @param args any value `canonicalJson` accepts; normally the call's arguments object.
 * @param options `secret` for keyed mode.
 * @throws CanonicalizationError as {@link canonicalJson} (path relative to `args`; a getter or
 *   Proxy trap that threw is its `cause`).
 * @throws PolicyError (field `secret`) for a secret that is not a string or Uint8Array of at
 *   least {@link MIN_KEY_SECRET_BYTES} bytes, or options that cannot be read.
 *   Nothing else is thrown, whatever the input.
 */
export function argumentsFingerprint(args: unknown, options?: FingerprintOptions): string {
  const secret = options === undefined ? undefined : fingerprintSecret(options);
  const text = canonicalJson(args);
  return digest(text, secret);
}

/**
 * Why `secret` is not a usable key secret, or undefined when it is: a string (well-formed
 * Unicode) or a Uint8Array (a Buffer is one) of at least {@link MIN_KEY_SECRET_BYTES} bytes.
 * For checking a secret when it is configured (a guard's constructor), before any call needs it.
 * Never throws.
 */
export function keySecretProblem(secret: unknown): string | undefined {
  try {
    const bytes = secretBytes(secret);
    return typeof bytes === 'string' ? bytes : undefined;
  } catch (error) {
    return `could not be read: ${describeThrown(error)}`;
  }
}

interface Derivation {
  readonly text: string;
  readonly secret: Buffer | undefined;
}

/** Every `KeyDerivationError` made here, so the catch-all never mistakes a thrown value for one. */
const ours = new WeakSet<object>();

function fail(
  tool: string,
  reason: string,
  options?: { argument?: string; field?: string; cause?: unknown },
): KeyDerivationError {
  const error = new KeyDerivationError(tool, reason, options);
  ours.add(error);
  return error;
}

function derive(input: KeyInput, withSecret: boolean): Derivation {
  // The tool name once it is known, for the catch-all's error.
  const known = { tool: '(unknown)' };
  try {
    return deriveParts(input, withSecret, known);
  } catch (error) {
    if (typeof error === 'object' && error !== null && ours.has(error)) throw error;
    // Not expected (every read of the input is guarded): whatever it is, the call fails closed.
    throw fail(known.tool, `deriving the key threw ${describeThrown(error)}`, { cause: error });
  }
}

function deriveParts(input: KeyInput, withSecret: boolean, known: { tool: string }): Derivation {
  if (input === null || (typeof input !== 'object' && typeof input !== 'function')) {
    throw fail(known.tool, `the key input must be an object, got ${show(input)}`, { field: 'input' });
  }
  const tool = read(input, 'tool', known.tool);
  const toolProblem = nameProblem(tool);
  if (toolProblem !== undefined) {
    throw fail(show(tool), `the tool name ${toolProblem}`, { field: 'tool' });
  }
  const toolName = tool as string;
  known.tool = toolName;
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
  const argumentsObject = args as Record<string, unknown>;

  const scope = read(input, 'scope', toolName) ?? 'run';
  let scopeText: string;
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
    scopeText = text(toolName, 'runId', 'the run id', runId);
  } else if (scope === 'tenant') {
    scopeText = 'null';
  } else {
    throw fail(toolName, `the scope must be 'run' or 'tenant', got ${show(scope)}`, { field: 'scope' });
  }

  const strategy = read(input, 'key', toolName) ?? 'arguments';
  const keyArguments = read(input, 'keyArguments', toolName);
  if (strategy !== 'arguments' && keyArguments !== undefined) {
    throw fail(toolName, "keyArguments applies only to the 'arguments' key strategy", {
      field: 'keyArguments',
    });
  }
  let argsText: string;
  if (strategy === 'arguments') {
    const subset =
      keyArguments === undefined ? argumentsObject : pick(toolName, argumentsObject, keyArguments);
    argsText = '{"arguments":' + part(toolName, 'arguments', 'the arguments', subset) + '}';
  } else if (strategy === 'call') {
    const callId = read(input, 'callId', toolName);
    if (typeof callId !== 'string' || callId.length === 0) {
      throw fail(toolName, `key 'call' needs a non-empty tool call id, got ${show(callId)}`, {
        field: 'callId',
      });
    }
    checkId(toolName, 'callId', 'the tool call id', callId);
    argsText = '{"call":' + text(toolName, 'callId', 'the call id', callId) + '}';
  } else if (typeof strategy === 'function') {
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
    argsText = '{"business":' + text(toolName, 'key', 'the business key', business) + '}';
  } else {
    throw fail(toolName, `the key must be 'arguments', 'call' or a function, got ${show(strategy)}`, {
      field: 'key',
    });
  }

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

/** `input[field]`; a getter or Proxy trap that throws is a `KeyDerivationError` naming the field. */
function read(input: object, field: keyof KeyInput, tool: string): unknown {
  try {
    return (input as Record<string, unknown>)[field];
  } catch (cause) {
    throw fail(tool, `reading ${field} of the key input threw ${describeThrown(cause)}`, { field, cause });
  }
}

/** A run id or call id: hashed only, so no store limit applies, but bounded and well-formed. */
function checkId(tool: string, field: string, what: string, id: string): void {
  if (id.length > MAX_ID_LENGTH) {
    throw fail(tool, `${what} must be at most ${MAX_ID_LENGTH} characters, got ${id.length}`, { field });
  }
  if (!isWellFormedText(id)) {
    throw fail(
      tool,
      `${what} must be well-formed Unicode (it has a lone surrogate, which has no exact UTF-8 form)`,
      { field },
    );
  }
}

/**
 * `crypto.hash` (Node >= 20.12 / 21.7): a one-shot SHA-256 with no Hash object, about half the
 * cost of `createHash` for a key-sized text. Undefined on older Node 20, where `createHash` is used.
 */
const oneShotHash = (cryptoModule as { hash?: (algorithm: string, data: string, encoding: 'hex') => string })
  .hash;

function digest(text: string, secret: Buffer | undefined): string {
  if (secret === undefined) {
    // The same bytes either way: the text as UTF-8 (the key text is well-formed: checked above).
    if (oneShotHash !== undefined) return oneShotHash('sha256', text, 'hex');
    return createHash('sha256').update(text, 'utf8').digest('hex');
  }
  return createHmac('sha256', secret).update(text, 'utf8').digest('hex');
}

const typedArrayByteLength = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype) as object,
  'byteLength',
)?.get as (this: Uint8Array) => number;

/**
 * The bytes of a key secret (a copy, so a later change to the caller's array changes nothing
 * mid-derivation), or why it is refused. May throw on a hostile value (a Proxy); callers wrap.
 */
function secretBytes(secret: unknown): Buffer | string {
  if (typeof secret === 'string') {
    if (!isWellFormedText(secret)) {
      return 'must be well-formed Unicode (a string secret with a lone surrogate has no exact UTF-8 form)';
    }
    const bytes = Buffer.from(secret, 'utf8');
    if (bytes.length < MIN_KEY_SECRET_BYTES) {
      return (
        `must be at least ${MIN_KEY_SECRET_BYTES} bytes, got ${bytes.length} ` +
        '(a string counts its UTF-8 bytes; generate one with crypto.randomBytes(32))'
      );
    }
    return bytes;
  }
  if (isUint8Array(secret)) {
    // The intrinsic getter: an own `byteLength` property on the array cannot lie about its size.
    const length = typedArrayByteLength.call(secret);
    if (length < MIN_KEY_SECRET_BYTES) {
      return `must be at least ${MIN_KEY_SECRET_BYTES} bytes, got ${length} (generate one with crypto.randomBytes(32))`;
    }
    const bytes = Buffer.alloc(length);
    bytes.set(secret);
    return bytes;
  }
  if (Array.isArray(secret)) {
    return (
      'must be one secret (a string or a Uint8Array), not an array: the key is made with exactly ' +
      'one secret; to rotate, see docs/key-spec.md section 6.4'
    );
  }
  return `must be a string or a Uint8Array (a Buffer), got ${show(secret)}`;
}

function keySecret(tool: string, secret: unknown): Buffer {
  let bytes: Buffer | string;
  try {
    bytes = secretBytes(secret);
  } catch (cause) {
    throw fail(tool, `the secret could not be read: ${describeThrown(cause)}`, { field: 'secret', cause });
  }
  if (typeof bytes === 'string') throw fail(tool, `the secret ${bytes}`, { field: 'secret' });
  return bytes;
}

function fingerprintSecret(options: FingerprintOptions): Buffer | undefined {
  if (options === null || typeof options !== 'object') {
    throw new PolicyError('options', `must be an object such as { secret }, got ${show(options)}`);
  }
  let bytes: Buffer | string | undefined;
  try {
    const secret: unknown = options.secret;
    bytes = secret === undefined ? undefined : secretBytes(secret);
  } catch (cause) {
    throw new PolicyError('secret', `could not be read: ${describeThrown(cause)}`, { cause });
  }
  if (typeof bytes === 'string') throw new PolicyError('secret', bytes);
  return bytes;
}
/** The key arguments of `args`, in a null-prototype object (so `__proto__` is an ordinary name). */
function pick(tool: string, args: Record<string, unknown>, names: unknown): Record<string, unknown> {
  let count: number;
  try {
    if (!Array.isArray(names)) {
      throw fail(tool, `keyArguments must be an array of argument names, got ${describe(names)}`, {
        field: 'keyArguments',
      });
    }
    count = names.length;
  } catch (cause) {
    if (typeof cause === 'object' && cause !== null && ours.has(cause)) throw cause;
    throw fail(tool, `reading keyArguments threw ${describeThrown(cause)}`, { field: 'keyArguments', cause });
  }
  if (count === 0) {
    throw fail(
      tool,
      'keyArguments is empty: the key would name no argument and merge every call of the tool; ' +
        'name the arguments, or use a function key for a fixed business key',
      { field: 'keyArguments' },
    );
  }
  const subset: Record<string, unknown> = Object.create(null);
  // By index, not with the array's iterator (an own Symbol.iterator could yield anything).
  for (let index = 0; index < count; index++) {
    let name: unknown;
    try {
      name = (names as unknown[])[index];
    } catch (cause) {
      throw fail(tool, `reading keyArguments threw ${describeThrown(cause)}`, {
        field: 'keyArguments',
        cause,
      });
    }
    if (typeof name !== 'string' || name.length === 0) {
      throw fail(tool, `keyArguments must hold non-empty names, got ${show(name)}`, {
        field: 'keyArguments',
      });
    }
    let present: boolean;
    let value: unknown;
    try {
      present = Object.hasOwn(args, name);
      value = present ? args[name] : undefined;
    } catch (cause) {
      throw fail(tool, `reading the key argument ${show(name)} threw ${describeThrown(cause)}`, {
        argument: name,
        field: 'arguments',
        cause,
      });
    }
    if (value === undefined) {
      throw fail(
        tool,
        `the key argument ${show(name)} is ${present ? 'undefined' : 'missing'}; ` +
          'the call cannot be told apart from other calls, so it is refused',
        { argument: name, field: 'arguments' },
      );
    }
    if (typeof value === 'symbol' || typeof value === 'function') {
      // JSON has no such value: canonically it would vanish like undefined, and every symbol or
      // function would share one key.
      throw fail(
        tool,
        `the key argument ${show(name)} is a ${typeof value}, which JSON cannot represent; ` +
          'the call cannot be told apart from other calls, so it is refused',
        { argument: name, field: 'arguments' },
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
function text(tool: string, field: string, what: string, value: string): string {
  return PLAIN_ASCII.test(value) ? '"' + value + '"' : part(tool, field, what, value);
}

/** `canonicalJson(value)`, any error it throws turned into a `KeyDerivationError` (kept as `cause`). */
function part(tool: string, field: string, what: string, value: unknown): string {
  try {
    return canonicalJson(value);
  } catch (error) {
    if (isCanonicalizationError(error)) {
      const where = error.path === '' ? '' : ` at ${show(error.path)}`;
      const prefix = `Cannot canonicalize the value at "${error.path}": `;
      const reason = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
      throw fail(tool, `${what} cannot be canonicalized${where}: ${reason}`, { field, cause: error });
    }
    // canonicalJson throws nothing else; a stack overflow at the edge of the stack is the exception.
    throw fail(tool, `${what} could not be read: ${describeThrown(error)}`, { field, cause: error });
  }
}

function isCanonicalizationError(error: unknown): error is CanonicalizationError {
  try {
    return error instanceof CanonicalizationError;
  } catch {
    return false;
  }
}

/** Reads the prototype, so a Proxy trap may throw: callers catch. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** What `value` is, for a message. Never throws (a Proxy's traps are caught). */
function describe(value: unknown): string {
  try {
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    if (typeof value === 'object') {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor
        ?.name;
      return typeof name === 'string' && name !== ''
        ? `an instance of ${show(name).slice(1, -1)}`
        : 'an object';
    }
  } catch {
    return 'an object';
  }
  return show(value);
}

/** A value for a message: strings JSON-quoted and cut to 64 code units. Never throws. */
function show(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 64
      ? `${JSON.stringify(value.slice(0, 64))}... (${value.length} characters)`
      : JSON.stringify(value);
  }
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}
