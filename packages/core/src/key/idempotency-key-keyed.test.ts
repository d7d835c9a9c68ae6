import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PolicyError } from '../errors/policy-error.js';
import {
  argumentsFingerprint,
  canonicalEnvelope,
  idempotencyKey,
  type KeyInput,
  keySecretProblem,
} from './idempotency-key.js';
import { base, derivationError, sha256 } from './key.test-support.js';

describe('keyed mode (HMAC-SHA-256 under a secret)', () => {
  const secret = 'a test secret of at least thirty-two bytes';
  const hmac = (key: string | Uint8Array, text: string): string =>
    createHmac('sha256', key).update(text, 'utf8').digest('hex');
  const input: KeyInput = { ...base, arguments: { orderId: 'A-100', amount: 5 } };

  it('is the HMAC-SHA-256 of the same canonical envelope, and never the unkeyed key', () => {
    const envelope = canonicalEnvelope(input);
    expect(canonicalEnvelope({ ...input, secret })).toBe(envelope);
    const keyed = idempotencyKey({ ...input, secret });
    expect(keyed).toBe(hmac(secret, envelope));
    expect(keyed).toMatch(/^[0-9a-f]{64}$/);
    expect(keyed).not.toBe(idempotencyKey(input));
    expect(idempotencyKey({ ...input, secret: undefined })).toBe(idempotencyKey(input));
  });

  it('a string secret is its UTF-8 bytes; a Buffer and a Uint8Array of those bytes give the same key', () => {
    const bytes = Buffer.from(secret, 'utf8');
    const key = idempotencyKey({ ...input, secret });
    expect(idempotencyKey({ ...input, secret: bytes })).toBe(key);
    expect(idempotencyKey({ ...input, secret: new Uint8Array(bytes) })).toBe(key);
    // A view into a larger buffer: only its own bytes count.
    const padded = Buffer.concat([Buffer.from('xx'), bytes, Buffer.from('yy')]);
    expect(idempotencyKey({ ...input, secret: padded.subarray(2, 2 + bytes.length) })).toBe(key);
    // Strings are not normalised: NFC and NFD spellings are two secrets.
    const nfc = `${'\u00e9'.repeat(16)}`;
    expect(idempotencyKey({ ...input, secret: nfc })).not.toBe(
      idempotencyKey({ ...input, secret: nfc.normalize('NFD') }),
    );
  });

  it('different secrets give different keys and fingerprints; keys still separate tenants, tools and strategies', () => {
    const other = 'another test secret of at least 32 bytes';
    expect(idempotencyKey({ ...input, secret })).not.toBe(idempotencyKey({ ...input, secret: other }));
    expect(argumentsFingerprint(input.arguments, { secret })).not.toBe(
      argumentsFingerprint(input.arguments, { secret: other }),
    );
    const keys = [
      idempotencyKey({ ...input, secret }),
      idempotencyKey({ ...input, tenant: 'globex', secret }),
      idempotencyKey({ ...input, tool: 'charge', secret }),
      idempotencyKey({ ...input, key: 'call', callId: 'c1', secret }),
      idempotencyKey({ ...input, key: () => 'c1', secret }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('a change to the caller’s secret array after the call changes nothing already derived', () => {
    const bytes = Buffer.alloc(32, 1);
    const before = idempotencyKey({ ...input, secret: bytes });
    bytes[0] = 2;
    expect(idempotencyKey({ ...input, secret: bytes })).not.toBe(before);
    bytes[0] = 1;
    expect(idempotencyKey({ ...input, secret: bytes })).toBe(before);
  });

  it.each([
    ['31 ASCII bytes', 'x'.repeat(31), /must be at least 32 bytes, got 31/],
    ['the empty string', '', /must be at least 32 bytes, got 0/],
    ['31 bytes as a Uint8Array', new Uint8Array(31), /must be at least 32 bytes, got 31/],
    ['a lone surrogate', `${'x'.repeat(40)}\ud800`, /well-formed Unicode/],
    ['an array of secrets', ['x'.repeat(32), 'y'.repeat(32)], /must be one secret .* not an array/],
    ['null', null, /must be a string or a Uint8Array/],
    ['a number', 32, /must be a string or a Uint8Array/],
    ['an ArrayBuffer', new ArrayBuffer(32), /must be a string or a Uint8Array/],
    ['a Uint16Array', new Uint16Array(16), /must be a string or a Uint8Array/],
  ])(
    'refuses a secret that is %s: KeyDerivationError (field secret), PolicyError for the fingerprint',
    (_case, bad, reason) => {
      const error = derivationError({ ...input, secret: bad as string });
      expect(error.field).toBe('secret');
      expect(error.message).toMatch(reason);
      expect(keySecretProblem(bad)).toMatch(reason);
      try {
        argumentsFingerprint({}, { secret: bad as string });
        expect.fail('expected a PolicyError');
      } catch (caught) {
        expect(PolicyError.isInstance(caught)).toBe(true);
        expect((caught as PolicyError).field).toBe('secret');
        expect((caught as PolicyError).message).toMatch(reason);
      }
    },
  );

  it('accepts exactly 32 bytes, counting a string in UTF-8 (16 × "é" is 32 bytes)', () => {
    expect(keySecretProblem('x'.repeat(32))).toBeUndefined();
    expect(keySecretProblem('\u00e9'.repeat(16))).toBeUndefined();
    expect(keySecretProblem('\u00e9'.repeat(15))).toMatch(/got 30/);
    expect(keySecretProblem(Buffer.alloc(32))).toBeUndefined();
    expect(idempotencyKey({ ...input, secret: '\u00e9'.repeat(16) })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keySecretProblem never throws: a revoked Proxy, an own byteLength that lies', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(keySecretProblem(proxy)).toMatch(/could not be read|must be a string/);
    const liar = Object.defineProperty(new Uint8Array(4), 'byteLength', { value: 64 });
    expect(keySecretProblem(liar)).toMatch(/got 4/);
  });

  it('the secret is checked before the arguments are read, so a bad secret fails every call alike', () => {
    const error = derivationError({
      ...base,
      arguments: null as unknown as Record<string, unknown>,
      secret: 'short',
    });
    expect(error.field).toBe('secret');
  });

  it('argumentsFingerprint: HMAC of the canonical arguments; {} and { secret: undefined } are unkeyed', () => {
    const args = { b: [1, 2], a: 'x' };
    expect(argumentsFingerprint(args, { secret })).toBe(hmac(secret, '{"a":"x","b":[1,2]}'));
    expect(argumentsFingerprint(args, {})).toBe(argumentsFingerprint(args));
    expect(argumentsFingerprint(args, { secret: undefined })).toBe(sha256('{"a":"x","b":[1,2]}'));
    expect(() => argumentsFingerprint(args, null as unknown as { secret: string })).toThrow(PolicyError);
  });
});
