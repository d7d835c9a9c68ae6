import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../packages/core/src/key/canonical-json.js';
import { idempotencyKey, type KeyInput } from '../../packages/core/src/key/idempotency-key.js';

interface Vector {
  name: string;
  input: {
    tenant: string;
    runId?: string;
    tool: string;
    arguments: Record<string, unknown>;
    keyArguments?: string[];
    key?: 'arguments' | 'call' | { business: string };
    scope?: 'run' | 'tenant';
    callId?: string;
  };
  canonical: string;
  key: string;
}

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

function toKeyInput(input: Vector['input']): KeyInput {
  const { key, ...rest } = input;
  if (key === undefined) return rest;
  return { ...rest, key: typeof key === 'string' ? key : () => key.business };
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

    it('an independent SHA-256 of `canonical` gives `key`', () => {
      expect(vector.key).toMatch(/^[0-9a-f]{64}$/);
      expect(createHash('sha256').update(Buffer.from(vector.canonical, 'utf8')).digest('hex')).toBe(
        vector.key,
      );
    });

    it('`canonical` is the canonical JSON of the envelope built from the spec', () => {
      const envelope = expectedEnvelope(vector.input);
      expect(canonicalJson(envelope)).toBe(vector.canonical);
      expect(canonicalize(nfc(envelope))).toBe(vector.canonical);
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

  it('keeps number spellings in the JSON text (2.0, -0, 1E+21) for other languages', () => {
    expect(text).toContain('"arguments": {"n": 2.0}');
    expect(text).toContain('"arguments": {"n": -0}');
    expect(text).toContain('"arguments": {"n": 1E+21}');
    expect(Object.is(byName('number -0 is written 0').input.arguments.n, -0)).toBe(true);
  });
});
