// What a key is derived from: the vocabulary idempotency-key.ts and its parts share, in a leaf
// so the parts never import the file that uses them.
import type { KeyScope, KeyStrategy } from '../policy/idempotency-policy.js';

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
