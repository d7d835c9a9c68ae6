// Key secrets (docs/key-spec.md section 6): what a usable one is, its bytes copied before use,
// and the digest of the canonical text, SHA-256 or HMAC-SHA-256 under the secret.
import * as cryptoModule from 'node:crypto';
import { createHash, createHmac } from 'node:crypto';
import { isUint8Array } from 'node:util/types';
import { PolicyError } from '../errors/policy-error.js';
import { isWellFormedText } from '../store/store-input.js';
import { describeThrown } from './canonical-json.js';
import { fail, show } from './key-failure.js';
import type { FingerprintOptions } from './key-types.js';

/** Shortest key secret, in bytes (a string counts its UTF-8 bytes): the size of the HMAC-SHA-256 output. */
export const MIN_KEY_SECRET_BYTES = 32;

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

/**
 * `crypto.hash` (Node >= 20.12 / 21.7): a one-shot SHA-256 with no Hash object, about half the
 * cost of `createHash` for a key-sized text. Undefined on older Node 20, where `createHash` is used.
 */
const oneShotHash = (cryptoModule as { hash?: (algorithm: string, data: string, encoding: 'hex') => string })
  .hash;

export function digest(text: string, secret: Buffer | undefined): string {
  if (secret === undefined) {
    // The same bytes either way: the text as UTF-8.
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
export function secretBytes(secret: unknown): Buffer | string {
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

export function keySecret(tool: string, secret: unknown): Buffer {
  let bytes: Buffer | string;
  try {
    bytes = secretBytes(secret);
  } catch (cause) {
    throw fail(tool, `the secret could not be read: ${describeThrown(cause)}`, { field: 'secret', cause });
  }
  if (typeof bytes === 'string') throw fail(tool, `the secret ${bytes}`, { field: 'secret' });
  return bytes;
}

export function fingerprintSecret(options: FingerprintOptions): Buffer | undefined {
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
