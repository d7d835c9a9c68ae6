import { canonicalJson } from './canonical-json.js';
import { derive } from './key-envelope.js';
import { digest, fingerprintSecret } from './key-secret.js';
import type { FingerprintOptions, KeyInput } from './key-types.js';

export { MAX_ID_LENGTH } from './key-limits.js';
export { keySecretProblem, MIN_KEY_SECRET_BYTES } from './key-secret.js';
export type { FingerprintOptions, KeyInput, KeySecret } from './key-types.js';

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
