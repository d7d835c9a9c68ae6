import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../packages/core/src/key/canonical-json.js';
import {
  argumentsFingerprint,
  idempotencyKey,
  type KeyInput,
} from '../../packages/core/src/key/idempotency-key.js';

// #region vector
interface Vector {
  name: string;
  input: {
    tenant: string;
    runId?: string;
    tool: string;
    /** Written as raw JSON text, so that spellings such as 2.0, -0 and 1E+21 reach your parser. */
    arguments: Record<string, unknown>;
    keyArguments?: string[];
    /** A business key is the string the key function returns. */
    key?: 'arguments' | 'call' | { business: string };
    scope?: 'run' | 'tenant';
    callId?: string;
    /** `text`: its UTF-8 bytes are the HMAC key; `hex`: the HMAC key's bytes. */
    secret?: { text: string } | { hex: string };
  };
  /** The exact canonical text of the envelope: the key hashes it. */
  canonical: string;
  /** 64 lowercase hex characters. */
  key: string;
  /** The exact canonical text of the arguments: the fingerprint hashes it. */
  argumentsCanonical: string;
  /** 64 lowercase hex characters. */
  fingerprint: string;
}
// #endregion vector

const file = new URL('../vectors/keys.json', import.meta.url);
const text = readFileSync(file, 'utf8');
const vectors = JSON.parse(text) as Vector[];

/** The envelope of docs/key-spec.md, built here from the spec rather than by the implementation. */
function expectedEnvelope(input: Vector['input']): unknown {
  const strategy = input.key ?? 'arguments';
  let args: unknown;
  if (strategy === 'call') args = { call: input.callId };
  else if (typeof strategy === 'object') args = { business: strategy.business };
  else if (input.keyArguments === undefined) args = { arguments: input.arguments };
  else
    args = { arguments: Object.fromEntries(input.keyArguments.map((name) => [name, input.arguments[name]])) };
  return {
    v: 1,
    tenant: input.tenant,
    scope: input.scope === 'tenant' ? null : input.runId,
    tool: input.tool,
    args,
  };
}

/** The HMAC key bytes of a vector's secret: the UTF-8 of `text`, or the bytes of `hex`. */
function secretBytes(secret: NonNullable<Vector['input']['secret']>): Buffer {
  return 'text' in secret ? Buffer.from(secret.text, 'utf8') : Buffer.from(secret.hex, 'hex');
}

/** As the implementation is called: a text secret as a string, a hex secret as a Uint8Array. */
function toKeyInput(input: Vector['input']): KeyInput {
  const { key, secret, ...rest } = input;
  const keyed =
    secret === undefined
      ? {}
      : { secret: 'text' in secret ? secret.text : new Uint8Array(secretBytes(secret)) };
  if (key === undefined) return { ...rest, ...keyed };
  return { ...rest, ...keyed, key: typeof key === 'string' ? key : () => key.business };
}

/** SHA-256, or HMAC-SHA-256 under the vector's secret, with Node's crypto on the UTF-8 bytes. */
function independentDigest(text: string, secret: Vector['input']['secret']): string {
  const bytes = Buffer.from(text, 'utf8');
  if (secret === undefined) return createHash('sha256').update(bytes).digest('hex');
  return createHmac('sha256', secretBytes(secret)).update(bytes).digest('hex');
}

/** Map every string and key to NFC (for the `canonicalize` package, which does not). */
function nfc(value: unknown): unknown {
  if (typeof value === 'string') return value.normalize('NFC');
  if (Array.isArray(value)) return value.map(nfc);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [key.normalize('NFC'), nfc(member)]),
    );
  }
  return value;
}

const byName = (name: string): Vector => {
  const vector = vectors.find((v) => v.name === name);
  if (vector === undefined) throw new Error(`no vector named ${name}`);
  return vector;
};

describe('test/vectors/keys.json', () => {
  it('holds at least 40 uniquely named vectors, in an ASCII-only file', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(40);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    expect(/^[\n\x20-\x7e]*$/.test(text)).toBe(true);
  });

  describe.each(vectors)('$name', (vector) => {
    it('idempotencyKey gives `key`', () => {
      expect(idempotencyKey(toKeyInput(vector.input))).toBe(vector.key);
    });

    it('an independent SHA-256 (HMAC-SHA-256 when keyed) of `canonical` gives `key`', () => {
      expect(vector.key).toMatch(/^[0-9a-f]{64}$/);
      expect(independentDigest(vector.canonical, vector.input.secret)).toBe(vector.key);
    });

    it('`canonical` is the canonical JSON of the envelope built from the spec', () => {
      const envelope = expectedEnvelope(vector.input);
      expect(canonicalJson(envelope)).toBe(vector.canonical);
      expect(canonicalize(nfc(envelope))).toBe(vector.canonical);
    });

    it('argumentsFingerprint gives `fingerprint`', () => {
      const secret = toKeyInput(vector.input).secret;
      expect(argumentsFingerprint(vector.input.arguments, { secret })).toBe(vector.fingerprint);
      if (secret === undefined) expect(argumentsFingerprint(vector.input.arguments)).toBe(vector.fingerprint);
    });

    it('an independent SHA-256 (HMAC-SHA-256 when keyed) of `argumentsCanonical` gives `fingerprint`', () => {
      expect(vector.fingerprint).toMatch(/^[0-9a-f]{64}$/);
      expect(independentDigest(vector.argumentsCanonical, vector.input.secret)).toBe(vector.fingerprint);
    });

    it('`argumentsCanonical` is the canonical JSON of the arguments', () => {
      expect(canonicalJson(vector.input.arguments)).toBe(vector.argumentsCanonical);
      expect(canonicalize(nfc(vector.input.arguments))).toBe(vector.argumentsCanonical);
    });
  });

  it('pins the documented equalities and differences', () => {
    const same = (a: string, b: string) => expect(byName(a).key).toBe(byName(b).key);
    const differ = (a: string, b: string) => expect(byName(a).key).not.toBe(byName(b).key);
    same('flat arguments', 'flat arguments, other insertion order (same key)');
    same('C05 nested object', 'C05 nested object, every level reordered (same key)');
    differ('array [1, 2]', 'array [2, 1] (array order matters: other key)');
    same('case-different keys {a, A}', 'case-different keys {A, a} (same key)');
    same('NFC string value "Zo\\u00eb"', 'NFD string value "Zoe\\u0308" (same key as NFC)');
    same('NFC key "caf\\u00e9"', 'NFD key "cafe\\u0301" (same key as NFC)');
    same('NFC tenant', 'NFD tenant (same key as the NFC tenant)');
    same('number 1e21 is written 1e+21', 'number 1E+21 (same key as 1e21)');
    same('number -0 is written 0', 'number 0 (same key as -0)');
    same('number 2.0 in the JSON text', 'number 2 (same key as 2.0: one IEEE 754 value)');
    differ(
      'integer 9007199254740993 loses precision when parsed: written 9007199254740992',
      'the same id as a string keeps every digit',
    );
    same('key subset: orderId only', 'key subset: other note (same key)');
    same('business key, tenant scope', 'business key, other arguments (same key)');
    differ('business key, tenant scope', 'business key, other tenant');
    differ('business key, tenant scope', 'business key, run scope');
    differ('business key, tenant scope', 'an argument named "business" is not a business key (other key)');
    same('call key', 'call key, other arguments (same key)');
    differ('call key', 'call key, other call id');
    differ('call key', 'an argument named "call" is not a call key (other key)');
    same('tenant scope: scope is null', 'tenant scope ignores a run id (same key)');
    same('flat arguments', 'explicit run scope and arguments strategy (same key as the defaults)');
    const separated = [
      'flat arguments',
      'other tenant',
      'other run',
      'other tool',
      'tenant scope: scope is null',
    ];
    expect(new Set(separated.map((name) => byName(name).key)).size).toBe(separated.length);
    const present = [
      'key argument null',
      'key argument ""',
      'key argument []',
      'key argument {}',
      'key argument "null" (a string, not null)',
    ];
    expect(new Set(present.map((name) => byName(name).key)).size).toBe(present.length);
  });

  it('pins keyed mode: same envelope, other key; the secret decides; equalities hold as unkeyed', () => {
    const same = (a: string, b: string) => expect(byName(a).key).toBe(byName(b).key);
    const keyed = vectors.filter((vector) => vector.input.secret !== undefined);
    expect(keyed.length).toBeGreaterThanOrEqual(10);
    // The keyed envelope is the unkeyed one; only the hash differs, so the key does.
    expect(byName('keyed: flat arguments').canonical).toBe(byName('flat arguments').canonical);
    expect(byName('keyed: flat arguments').key).not.toBe(byName('flat arguments').key);
    expect(byName('keyed: flat arguments').fingerprint).not.toBe(byName('flat arguments').fingerprint);
    same('keyed: flat arguments', 'keyed: flat arguments, other insertion order (same key)');
    same('keyed: NFC string value', 'keyed: NFD string value (same key as NFC)');
    const bySecret = [
      'keyed: flat arguments',
      'keyed: flat arguments, a 32-byte secret given as bytes',
      'keyed: flat arguments, a secret longer than the 64-byte block',
      'keyed: flat arguments, a non-ASCII text secret (its UTF-8 bytes)',
      'flat arguments',
    ];
    expect(new Set(bySecret.map((name) => byName(name).key)).size).toBe(bySecret.length);
    // No keyed key or fingerprint is any unkeyed key or fingerprint in the file.
    const unkeyed = vectors.filter((vector) => vector.input.secret === undefined);
    const unkeyedDigests = new Set(unkeyed.flatMap((vector) => [vector.key, vector.fingerprint]));
    for (const vector of keyed) {
      expect(unkeyedDigests.has(vector.key)).toBe(false);
      expect(unkeyedDigests.has(vector.fingerprint)).toBe(false);
    }
    // The published secrets: 57 ASCII bytes; 32 bytes 00..1f; 90 bytes; UTF-8 of an accented text.
    const secretOf = (name: string) => secretBytes(byName(name).input.secret!);
    expect(secretOf('keyed: flat arguments').toString('utf8')).toBe(
      'toolfence key-spec test secret -- published, never use it',
    );
    expect(secretOf('keyed: flat arguments, a 32-byte secret given as bytes')).toEqual(
      Buffer.from(Array.from({ length: 32 }, (_, index) => index)),
    );
    expect(secretOf('keyed: flat arguments, a secret longer than the 64-byte block').length).toBeGreaterThan(
      64,
    );
    const accented = byName('keyed: flat arguments, a non-ASCII text secret (its UTF-8 bytes)').input.secret!;
    expect('text' in accented && accented.text.length).toBeLessThan(
      secretOf('keyed: flat arguments, a non-ASCII text secret (its UTF-8 bytes)').length,
    );
  });

  it('the unkeyed fingerprint of a 4-digit PIN among known arguments is found by trying all 10,000; the keyed one is not', () => {
    const search = (fingerprint: string, secret?: string): string | undefined => {
      for (let pin = 0; pin < 10_000; pin++) {
        const guess = { cardId: 'card-7', pin: String(pin).padStart(4, '0') };
        if (argumentsFingerprint(guess, { secret }) === fingerprint) return guess.pin;
      }
      return undefined;
    };
    expect(search(byName('unkeyed: business key with a 4-digit PIN among the arguments').fingerprint)).toBe(
      '4821',
    );
    const keyed = byName('keyed: business key with a 4-digit PIN among the arguments');
    // Without the secret (here: a guessed one), no PIN matches.
    expect(search(keyed.fingerprint, 'a guessed secret that is not the real one!!')).toBeUndefined();
    expect(search(keyed.fingerprint)).toBeUndefined();
  });

  it('keeps number spellings in the JSON text (2.0, -0, 1E+21) for other languages', () => {
    expect(text).toContain('"arguments": {"n": 2.0}');
    expect(text).toContain('"arguments": {"n": -0}');
    expect(text).toContain('"arguments": {"n": 1E+21}');
    expect(Object.is(byName('number -0 is written 0').input.arguments.n, -0)).toBe(true);
  });
});
