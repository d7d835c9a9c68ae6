/**
 * Writes test/vectors/keys.json: idempotency key vectors for docs/key-spec.md.
 *
 *   npx tsx --conditions=@toolfence/source test/vectors/generate-keys.ts
 *
 * Each vector's arguments are given as raw JSON text and written into the file as is, so number
 * spellings such as `2.0`, `-0` or `1E21` reach other languages' parsers unchanged. The whole file
 * is ASCII: every other character is written as a `\uXXXX` escape, so no editor can normalise the
 * NFD test strings. test/key/key-vectors.test.ts checks every vector against the implementation
 * and against an independent SHA-256 of `canonical`.
 */
import { writeFileSync } from 'node:fs';
import { canonicalJson } from '../../packages/core/src/key/canonical-json.js';
import {
  argumentsFingerprint,
  canonicalEnvelope,
  idempotencyKey,
  type KeyInput,
} from '../../packages/core/src/key/idempotency-key.js';

/** A vector as written: `key` is the strategy; a business key is the string the function returns. */
interface VectorInput {
  tenant: string;
  runId?: string;
  tool: string;
  /** Raw JSON text of the arguments object. */
  arguments: string;
  keyArguments?: string[];
  key?: 'arguments' | 'call' | { business: string };
  scope?: 'run' | 'tenant';
  callId?: string;
  /** Keyed mode: the secret as text (its UTF-8 bytes are the HMAC key) or as hex bytes. */
  secret?: { text: string } | { hex: string };
}

/**
 * The published test secrets of docs/key-spec.md section 6.5. Public, so never use them.
 * `text`: 57 ASCII bytes. `bytes`: exactly the minimum, 32 bytes 0x00..0x1f (not UTF-8 text).
 * `long`: 90 bytes, longer than the 64-byte SHA-256 block (RFC 2104 hashes such a key first).
 * `accented`: a string whose UTF-8 bytes (not its code units) are the key.
 */
const testSecret = { text: 'toolfence key-spec test secret -- published, never use it' } as const;
const testSecretBytes = {
  hex: Array.from({ length: 32 }, (_, index) => index.toString(16).padStart(2, '0')).join(''),
} as const;
const testSecretLong = {
  text: 'toolfence long test secret: longer than the 64-byte SHA-256 block, so HMAC hashes it first',
} as const;
const testSecretAccented = {
  text: 'cl\u00e9 de test toolfence, publi\u00e9e : ne jamais l\u2019utiliser',
} as const;

const run = { tenant: 'acme', runId: 'run-1', tool: 'create_order' } as const;
const tenantScope = { tenant: 'acme', tool: 'refund', scope: 'tenant' } as const;
const args = (value: unknown): string => JSON.stringify(value);

const vectors: Array<{ name: string; input: VectorInput }> = [
  // Ordering (C05)
  { name: 'flat arguments', input: { ...run, arguments: args({ orderId: 'A-100', amount: 5 }) } },
  {
    name: 'flat arguments, other insertion order (same key)',
    input: { ...run, arguments: '{"amount": 5, "orderId": "A-100"}' },
  },
  {
    name: 'C05 nested object',
    input: { ...run, arguments: '{"name": "x", "age": 30, "addr": {"st": "5th", "no": 123}}' },
  },
  {
    name: 'C05 nested object, every level reordered (same key)',
    input: { ...run, arguments: '{"addr": {"no": 123, "st": "5th"}, "age": 30, "name": "x"}' },
  },
  { name: 'array [1, 2]', input: { ...run, arguments: '{"ids": [1, 2]}' } },
  { name: 'array [2, 1] (array order matters: other key)', input: { ...run, arguments: '{"ids": [2, 1]}' } },
  { name: 'case-different keys {a, A}', input: { ...run, arguments: '{"a": 1, "A": 2}' } },
  { name: 'case-different keys {A, a} (same key)', input: { ...run, arguments: '{"A": 2, "a": 1}' } },
  {
    name: 'integer-like keys: "10" sorts before "9"',
    input: { ...run, arguments: '{"9": "nine", "10": "ten"}' },
  },
  {
    name: 'integer-like and letter keys in UTF-16 order',
    input: { ...run, arguments: '{"b": 0, "2": 0, "10": 0, "1": 0, "B": 0, "_": 0}' },
  },
  {
    name: 'UTF-16 order: U+1F602 (D83D DE02) before U+FF21',
    input: { ...run, arguments: args({ '\uff21': 1, '\u{1f602}': 2, '\u00e9': 3 }) },
  },
  // Nesting and empty containers
  {
    name: 'deep nesting',
    input: { ...run, arguments: args({ a: { b: { c: [{ d: [1, { e: null }] }] } }, z: [[[]]] }) },
  },
  { name: 'empty arguments', input: { ...run, arguments: '{}' } },
  { name: 'empty containers and empty string', input: { ...run, arguments: args({ a: {}, b: [], c: '' }) } },
  { name: 'true, false, null', input: { ...run, arguments: args({ flag: true, off: false, none: null }) } },
  // Unicode NFC
  {
    name: 'NFC string value "Zo\\u00eb"',
    input: { ...run, arguments: args({ name: 'Zo\u00eb M\u00fcller' }) },
  },
  {
    name: 'NFD string value "Zoe\\u0308" (same key as NFC)',
    input: { ...run, arguments: args({ name: 'Zoe\u0308 Mu\u0308ller' }) },
  },
  { name: 'NFC key "caf\\u00e9"', input: { ...run, arguments: args({ 'caf\u00e9': 1 }) } },
  {
    name: 'NFD key "cafe\\u0301" (same key as NFC)',
    input: { ...run, arguments: args({ 'cafe\u0301': 1 }) },
  },
  { name: 'ANGSTROM SIGN U+212B becomes U+00C5', input: { ...run, arguments: args({ unit: '\u212b' }) } },
  {
    name: 'composition exclusion: key U+FB33 becomes U+05D3 U+05BC and sorts before U+20AC',
    input: { ...run, arguments: args({ '\u20ac': 'euro', '\ufb33': 'dalet' }) },
  },
  {
    name: 'NFD tenant (same key as the NFC tenant)',
    input: { ...run, tenant: 'cafe\u0301', arguments: '{}' },
  },
  { name: 'NFC tenant', input: { ...run, tenant: 'caf\u00e9', arguments: '{}' } },
  // Numbers (RFC 8785 section 3.2.2.3)
  { name: 'number 1e21 is written 1e+21', input: { ...run, arguments: '{"n": 1e21}' } },
  { name: 'number 1E+21 (same key as 1e21)', input: { ...run, arguments: '{"n": 1E+21}' } },
  { name: 'number 1e20 is written in full', input: { ...run, arguments: '{"n": 1e20}' } },
  { name: 'number 1e-7 is written 1e-7', input: { ...run, arguments: '{"n": 0.0000001}' } },
  { name: 'number 0.000001 stays decimal', input: { ...run, arguments: '{"n": 1e-6}' } },
  { name: 'number -0 is written 0', input: { ...run, arguments: '{"n": -0}' } },
  { name: 'number 0 (same key as -0)', input: { ...run, arguments: '{"n": 0}' } },
  { name: 'number 0.1 + 0.2', input: { ...run, arguments: '{"n": 0.30000000000000004}' } },
  { name: 'number 5e-324 (smallest subnormal)', input: { ...run, arguments: '{"n": 5e-324}' } },
  { name: 'number 2.0 in the JSON text', input: { ...run, arguments: '{"n": 2.0}' } },
  { name: 'number 2 (same key as 2.0: one IEEE 754 value)', input: { ...run, arguments: '{"n": 2}' } },
  {
    name: 'number 333333333.33333329 is written 333333333.3333333',
    input: { ...run, arguments: '{"n": 333333333.33333329}' },
  },
  {
    name: 'integer 9007199254740993 loses precision when parsed: written 9007199254740992',
    input: { ...run, arguments: '{"id": 9007199254740993}' },
  },
  {
    name: 'the same id as a string keeps every digit',
    input: { ...run, arguments: '{"id": "9007199254740993"}' },
  },
  { name: 'largest double', input: { ...run, arguments: '{"n": 1.7976931348623157e308, "m": -1.5}' } },
  // Strings (RFC 8785 section 3.2.2.2)
  {
    name: 'escapes: quote, backslash, slash, \\b \\t \\n \\f \\r',
    input: { ...run, arguments: args({ s: 'q" b\\ s/ \b\t\n\f\r' }) },
  },
  {
    name: 'other controls as lowercase \\u00xx; U+007F, U+2028, U+2029 literal',
    input: { ...run, arguments: args({ s: '\u0000\u0001\u000b\u001f\u007f\u2028\u2029' }) },
  },
  {
    name: 'keys that need escaping',
    input: { ...run, arguments: args({ 'a"b': 1, 'line\n': 2, '\u0001': 3 }) },
  },
  { name: 'astral character literal', input: { ...run, arguments: args({ s: '\u{1f602}\u{1d11e}' }) } },
  // Present values (C04): null, "", [], {} each give their own key
  { name: 'key argument null', input: { ...run, arguments: '{"orderId": null}', keyArguments: ['orderId'] } },
  { name: 'key argument ""', input: { ...run, arguments: '{"orderId": ""}', keyArguments: ['orderId'] } },
  { name: 'key argument []', input: { ...run, arguments: '{"orderId": []}', keyArguments: ['orderId'] } },
  { name: 'key argument {}', input: { ...run, arguments: '{"orderId": {}}', keyArguments: ['orderId'] } },
  {
    name: 'key argument "null" (a string, not null)',
    input: { ...run, arguments: '{"orderId": "null"}', keyArguments: ['orderId'] },
  },
  // Key subsets
  {
    name: 'key subset: orderId only',
    input: { ...run, arguments: '{"orderId": "A-1", "note": "first"}', keyArguments: ['orderId'] },
  },
  {
    name: 'key subset: other note (same key)',
    input: { ...run, arguments: '{"note": "second", "orderId": "A-1"}', keyArguments: ['orderId'] },
  },
  {
    name: 'key subset of two, named in another order',
    input: { ...run, arguments: '{"c": 3, "b": 2, "a": 1}', keyArguments: ['b', 'a'] },
  },
  // Business keys
  {
    name: 'business key, tenant scope',
    input: {
      ...tenantScope,
      arguments: '{"orderId": "A-100", "amount": 5}',
      key: { business: 'refund:A-100' },
    },
  },
  {
    name: 'business key, other arguments (same key)',
    input: {
      ...tenantScope,
      arguments: '{"orderId": "A-100", "amount": 7}',
      key: { business: 'refund:A-100' },
    },
  },
  {
    name: 'business key, other tenant',
    input: {
      ...tenantScope,
      tenant: 'globex',
      arguments: '{"orderId": "A-100"}',
      key: { business: 'refund:A-100' },
    },
  },
  {
    name: 'business key, run scope',
    input: { ...run, tool: 'refund', arguments: '{"orderId": "A-100"}', key: { business: 'refund:A-100' } },
  },
  {
    name: 'an argument named "business" is not a business key (other key)',
    input: { ...tenantScope, arguments: '{"business": "refund:A-100"}' },
  },
  // Call keys
  {
    name: 'call key',
    input: { ...run, arguments: '{"to": "a@example.com"}', key: 'call', callId: 'call_abc' },
  },
  {
    name: 'call key, other arguments (same key)',
    input: { ...run, arguments: '{"to": "b@example.com"}', key: 'call', callId: 'call_abc' },
  },
  {
    name: 'call key, other call id',
    input: { ...run, arguments: '{"to": "a@example.com"}', key: 'call', callId: 'call_abd' },
  },
  {
    name: 'an argument named "call" is not a call key (other key)',
    input: { ...run, arguments: '{"call": "call_abc"}' },
  },
  // Tenant, run, tool and scope separation
  {
    name: 'other tenant',
    input: { ...run, tenant: 'globex', arguments: args({ orderId: 'A-100', amount: 5 }) },
  },
  { name: 'other run', input: { ...run, runId: 'run-2', arguments: args({ orderId: 'A-100', amount: 5 }) } },
  {
    name: 'other tool',
    input: { ...run, tool: 'cancel_order', arguments: args({ orderId: 'A-100', amount: 5 }) },
  },
  {
    name: 'tenant scope: scope is null',
    input: {
      tenant: 'acme',
      tool: 'create_order',
      scope: 'tenant',
      arguments: args({ orderId: 'A-100', amount: 5 }),
    },
  },
  {
    name: 'tenant scope ignores a run id (same key)',
    input: { ...run, scope: 'tenant', arguments: args({ orderId: 'A-100', amount: 5 }) },
  },
  {
    name: 'explicit run scope and arguments strategy (same key as the defaults)',
    input: { ...run, scope: 'run', key: 'arguments', arguments: args({ orderId: 'A-100', amount: 5 }) },
  },
  // Keyed mode (section 6): HMAC-SHA-256 of the same canonical text under the secret
  {
    name: 'keyed: flat arguments',
    input: { ...run, arguments: args({ orderId: 'A-100', amount: 5 }), secret: testSecret },
  },
  {
    name: 'keyed: flat arguments, other insertion order (same key)',
    input: { ...run, arguments: '{"amount": 5, "orderId": "A-100"}', secret: testSecret },
  },
  {
    name: 'keyed: flat arguments, a 32-byte secret given as bytes',
    input: { ...run, arguments: args({ orderId: 'A-100', amount: 5 }), secret: testSecretBytes },
  },
  {
    name: 'keyed: flat arguments, a secret longer than the 64-byte block',
    input: { ...run, arguments: args({ orderId: 'A-100', amount: 5 }), secret: testSecretLong },
  },
  {
    name: 'keyed: flat arguments, a non-ASCII text secret (its UTF-8 bytes)',
    input: { ...run, arguments: args({ orderId: 'A-100', amount: 5 }), secret: testSecretAccented },
  },
  {
    name: 'keyed: NFC string value',
    input: { ...run, arguments: args({ name: 'Zo\u00eb M\u00fcller' }), secret: testSecret },
  },
  {
    name: 'keyed: NFD string value (same key as NFC)',
    input: { ...run, arguments: args({ name: 'Zoe\u0308 Mu\u0308ller' }), secret: testSecret },
  },
  {
    name: 'keyed: key subset',
    input: {
      ...run,
      arguments: '{"orderId": "A-1", "note": "first"}',
      keyArguments: ['orderId'],
      secret: testSecret,
    },
  },
  {
    name: 'keyed: call key',
    input: {
      ...run,
      arguments: '{"to": "a@example.com"}',
      key: 'call',
      callId: 'call_abc',
      secret: testSecret,
    },
  },
  {
    name: 'keyed: business key with a 4-digit PIN among the arguments',
    input: {
      ...tenantScope,
      tool: 'unlock_card',
      arguments: '{"cardId": "card-7", "pin": "4821"}',
      key: { business: 'unlock:card-7' },
      secret: testSecret,
    },
  },
  {
    name: 'unkeyed: business key with a 4-digit PIN among the arguments',
    input: {
      ...tenantScope,
      tool: 'unlock_card',
      arguments: '{"cardId": "card-7", "pin": "4821"}',
      key: { business: 'unlock:card-7' },
    },
  },
  {
    name: 'keyed: tenant scope',
    input: {
      tenant: 'acme',
      tool: 'create_order',
      scope: 'tenant',
      arguments: args({ orderId: 'A-100', amount: 5 }),
      secret: testSecret,
    },
  },
];

function secretOf(secret: VectorInput['secret']): string | Uint8Array | undefined {
  if (secret === undefined) return undefined;
  return 'text' in secret ? secret.text : Buffer.from(secret.hex, 'hex');
}

function toKeyInput(input: VectorInput): KeyInput {
  const { key, arguments: raw, secret, ...rest } = input;
  return {
    ...rest,
    arguments: JSON.parse(raw) as Record<string, unknown>,
    ...(key === undefined ? {} : { key: typeof key === 'string' ? key : () => key.business }),
    ...(secret === undefined ? {} : { secret: secretOf(secret) }),
  };
}

const placeholder = '@@ARGUMENTS@@';
const parts = vectors.map(({ name, input }) => {
  const keyInput = toKeyInput(input);
  const written = JSON.stringify(
    {
      name,
      input: { ...input, arguments: placeholder },
      canonical: canonicalEnvelope(keyInput),
      key: idempotencyKey(keyInput),
      argumentsCanonical: canonicalJson(keyInput.arguments),
      fingerprint: argumentsFingerprint(keyInput.arguments, { secret: keyInput.secret }),
    },
    null,
    2,
  );
  return written.replace(JSON.stringify(placeholder), input.arguments);
});
const names = new Set(vectors.map((vector) => vector.name));
if (names.size !== vectors.length) throw new Error('vector names must be unique');

// Indent by splitting on "\n" only: a /^/m regex would also match after U+2028 and U+2029.
const indent = (part: string): string =>
  part
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
const text = `[\n${parts.map(indent).join(',\n')}\n]\n`;
// ASCII only: escape everything else (JSON.parse restores it exactly).
const ascii = text.replace(
  /[^\n\x20-\x7e]/g,
  (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
);
writeFileSync(new URL('keys.json', import.meta.url), ascii);
console.log(`wrote ${vectors.length} vectors to test/vectors/keys.json`);
