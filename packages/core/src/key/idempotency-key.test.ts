import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { canonicalJson } from './canonical-json.js';
import {
  argumentsFingerprint,
  canonicalEnvelope,
  idempotencyKey,
  type KeyInput,
  keySecretProblem,
  MAX_ID_LENGTH,
} from './idempotency-key.js';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const base = { tenant: 'acme', runId: 'run-1', tool: 'refund' } as const;

function derivationError(input: KeyInput): KeyDerivationError {
  try {
    idempotencyKey(input);
  } catch (error) {
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    return error as KeyDerivationError;
  }
  throw new Error('expected a KeyDerivationError, nothing was thrown');
}

/** The envelope written as an object, to be canonicalized by `canonicalJson` as a whole. */
function envelope(input: KeyInput, args: unknown): unknown {
  return {
    v: 1,
    tenant: input.tenant,
    scope: input.scope === 'tenant' ? null : input.runId,
    tool: input.tool,
    args,
  };
}

describe('idempotencyKey', () => {
  it('is the lowercase hex SHA-256 of the canonical envelope', () => {
    const input: KeyInput = { ...base, arguments: { orderId: 'A-100', amount: 5 } };
    const key = idempotencyKey(input);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    const canonical =
      '{"args":{"arguments":{"amount":5,"orderId":"A-100"}},"scope":"run-1","tenant":"acme","tool":"refund","v":1}';
    expect(canonicalEnvelope(input)).toBe(canonical);
    expect(key).toBe(sha256(canonical));
    expect(key).toBe(idempotencyKey({ ...input, arguments: { amount: 5, orderId: 'A-100' } }));
  });

  it('tags args by strategy: { arguments }, { call }, { business }', () => {
    const args = { orderId: 'A-100' };
    expect(canonicalEnvelope({ ...base, arguments: args, key: 'call', callId: 'call_1' })).toBe(
      '{"args":{"call":"call_1"},"scope":"run-1","tenant":"acme","tool":"refund","v":1}',
    );
    expect(
      canonicalEnvelope({
        ...base,
        arguments: args,
        key: (a) => `refund:${String(a.orderId)}`,
        scope: 'tenant',
      }),
    ).toBe('{"args":{"business":"refund:A-100"},"scope":null,"tenant":"acme","tool":"refund","v":1}');
  });

  it('domain separation: an argument named "call" or "business" never meets a call id or business key', () => {
    const byCall = idempotencyKey({ ...base, arguments: {}, key: 'call', callId: 'x' });
    const byBusiness = idempotencyKey({ ...base, arguments: {}, key: () => 'x' });
    const callArgument = idempotencyKey({ ...base, arguments: { call: 'x' } });
    const businessArgument = idempotencyKey({ ...base, arguments: { business: 'x' } });
    expect(new Set([byCall, byBusiness, callArgument, businessArgument]).size).toBe(4);
  });

  it('uses only the key arguments, in any order, with any other arguments', () => {
    const one = idempotencyKey({
      ...base,
      arguments: { orderId: 'A-1', note: 'first', at: 1 },
      keyArguments: ['orderId'],
    });
    const two = idempotencyKey({
      ...base,
      arguments: { note: 'second', orderId: 'A-1' },
      keyArguments: ['orderId'],
    });
    const other = idempotencyKey({
      ...base,
      arguments: { orderId: 'A-2', note: 'first' },
      keyArguments: ['orderId'],
    });
    expect(one).toBe(two);
    expect(other).not.toBe(one);
    const ab = idempotencyKey({ ...base, arguments: { a: 1, b: 2, c: 3 }, keyArguments: ['a', 'b'] });
    const ba = idempotencyKey({ ...base, arguments: { b: 2, a: 1, c: 4 }, keyArguments: ['b', 'a'] });
    expect(ab).toBe(ba);
    expect(
      canonicalEnvelope({ ...base, arguments: { a: 1, b: 2, c: 3 }, keyArguments: ['b', 'a'] }),
    ).toContain('{"arguments":{"a":1,"b":2}}');
  });

  it('a subset is not the full arguments: {a} with keyArguments [a] equals all-arguments {a} (same canonical args)', () => {
    expect(idempotencyKey({ ...base, arguments: { a: 1, b: 2 }, keyArguments: ['a'] })).toBe(
      idempotencyKey({ ...base, arguments: { a: 1 } }),
    );
  });

  it('separates tenants, runs, tools and scopes', () => {
    const args = { orderId: 'A-1' };
    const keys = [
      idempotencyKey({ ...base, arguments: args }),
      idempotencyKey({ ...base, tenant: 'other', arguments: args }),
      idempotencyKey({ ...base, runId: 'run-2', arguments: args }),
      idempotencyKey({ ...base, tool: 'charge', arguments: args }),
      idempotencyKey({ ...base, scope: 'tenant', arguments: args }),
      idempotencyKey({ ...base, tenant: 'other', scope: 'tenant', arguments: args }),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it("scope 'tenant' ignores the run id; scope 'run' (the default) uses it", () => {
    const args = { orderId: 'A-1' };
    expect(idempotencyKey({ ...base, scope: 'tenant', arguments: args })).toBe(
      idempotencyKey({ ...base, runId: 'run-9', scope: 'tenant', arguments: args }),
    );
    expect(idempotencyKey({ tenant: 'acme', tool: 'refund', scope: 'tenant', arguments: args })).toBe(
      idempotencyKey({ ...base, scope: 'tenant', arguments: args }),
    );
    expect(idempotencyKey({ ...base, arguments: args })).toBe(
      idempotencyKey({ ...base, scope: 'run', arguments: args }),
    );
  });

  it("key 'call' depends on the call id only, not on the arguments", () => {
    const first = idempotencyKey({ ...base, arguments: { a: 1 }, key: 'call', callId: 'call_1' });
    expect(idempotencyKey({ ...base, arguments: { a: 2 }, key: 'call', callId: 'call_1' })).toBe(first);
    expect(idempotencyKey({ ...base, arguments: { a: 1 }, key: 'call', callId: 'call_2' })).not.toBe(first);
  });

  it('a business key function receives the arguments; equal business keys collapse, tenants stay apart', () => {
    const seen: unknown[] = [];
    const key = (args: Record<string, unknown>): string => {
      seen.push(args);
      return `refund:${String(args.orderId)}`;
    };
    const arguments1 = { orderId: 'A-100', amount: 5 };
    const one = idempotencyKey({ ...base, scope: 'tenant', arguments: arguments1, key });
    const two = idempotencyKey({ ...base, scope: 'tenant', arguments: { orderId: 'A-100', amount: 7 }, key });
    const otherTenant = idempotencyKey({
      ...base,
      tenant: 'globex',
      scope: 'tenant',
      arguments: arguments1,
      key,
    });
    expect(seen[0]).toBe(arguments1);
    expect(one).toBe(two);
    expect(otherTenant).not.toBe(one);
  });

  it('null, "", [], {}, 0 and false are present values with distinct keys', () => {
    const values = [null, '', [], {}, 0, false, 'null', '[]'];
    const keys = values.map((orderId) =>
      idempotencyKey({ ...base, arguments: { orderId }, keyArguments: ['orderId'] }),
    );
    expect(new Set(keys).size).toBe(values.length);
    expect(canonicalEnvelope({ ...base, arguments: { orderId: null }, keyArguments: ['orderId'] })).toContain(
      '{"arguments":{"orderId":null}}',
    );
  });

  it('without keyArguments, a missing and an undefined argument are both omitted (as JSON.stringify does)', () => {
    expect(idempotencyKey({ ...base, arguments: { a: 1, b: undefined } })).toBe(
      idempotencyKey({ ...base, arguments: { a: 1 } }),
    );
    expect(idempotencyKey({ ...base, arguments: { a: 1, b: null } })).not.toBe(
      idempotencyKey({ ...base, arguments: { a: 1 } }),
    );
  });

  it('accepts null-prototype arguments and an argument named __proto__', () => {
    const args = Object.assign(Object.create(null) as Record<string, unknown>, { b: 1, a: 2 });
    expect(idempotencyKey({ ...base, arguments: args })).toBe(
      idempotencyKey({ ...base, arguments: { a: 2, b: 1 } }),
    );
    const proto = JSON.parse('{"__proto__":"x","id":1}') as Record<string, unknown>;
    expect(canonicalEnvelope({ ...base, arguments: proto, keyArguments: ['__proto__'] })).toContain(
      '{"arguments":{"__proto__":"x"}}',
    );
  });

  it('NFC-normalises every string of the envelope', () => {
    expect(idempotencyKey({ ...base, tenant: 'caf\u00e9', arguments: { name: 'Zo\u00eb' } })).toBe(
      idempotencyKey({ ...base, tenant: 'cafe\u0301', arguments: { name: 'Zoe\u0308' } }),
    );
  });
});

describe('idempotencyKey refusals (KeyDerivationError naming the tool)', () => {
  it.each([
    ['missing', { amount: 5 }, /the key argument "orderId" is missing/],
    ['undefined', { orderId: undefined, amount: 5 }, /the key argument "orderId" is undefined/],
  ])('refuses a %s key argument, naming it', (_case, args, reason) => {
    const error = derivationError({ ...base, arguments: args, keyArguments: ['orderId'] });
    expect(error.tool).toBe('refund');
    expect(error.argument).toBe('orderId');
    expect(error.message).toMatch(reason);
    expect(error.message).toContain('tool "refund"');
  });

  it('does not take an inherited property for a key argument', () => {
    const args = Object.create({ orderId: 'inherited' }) as Record<string, unknown>;
    // A non-plain object is refused before key arguments are looked at.
    expect(derivationError({ ...base, arguments: args, keyArguments: ['orderId'] }).message).toMatch(
      /plain object/,
    );
    expect(derivationError({ ...base, arguments: {}, keyArguments: ['toString'] }).argument).toBe('toString');
  });

  it("refuses key 'call' without a non-empty call id", () => {
    expect(derivationError({ ...base, arguments: {}, key: 'call' }).message).toMatch(
      /needs a non-empty tool call id/,
    );
    expect(derivationError({ ...base, arguments: {}, key: 'call', callId: '' }).message).toMatch(
      /tool call id, got ""/,
    );
  });

  it("refuses scope 'run' without a non-empty run id (fails closed instead of sharing a key across runs)", () => {
    const { runId: _unused, ...noRun } = base;
    expect(derivationError({ ...noRun, arguments: {} }).message).toMatch(
      /scope 'run' needs a non-empty run id/,
    );
    expect(derivationError({ ...base, runId: '', arguments: {} }).message).toMatch(/run id, got ""/);
    expect(derivationError({ ...noRun, scope: 'run', arguments: {} }).tool).toBe('refund');
  });

  it('refuses a key function that throws, keeping the cause', () => {
    const boom = new Error('no order id');
    const error = derivationError({
      ...base,
      arguments: {},
      key: () => {
        throw boom;
      },
    });
    expect(error.message).toMatch(/the key function threw/);
    expect(error.cause).toBe(boom);
  });

  it.each([
    ['an empty string', ''],
    ['undefined', undefined],
    ['a number', 42],
    ['null', null],
    ['an object', { id: 1 }],
  ])('refuses a key function returning %s', (_case, result) => {
    const key = (() => result) as unknown as (args: Record<string, unknown>) => string;
    expect(derivationError({ ...base, arguments: {}, key }).message).toMatch(
      /must return a non-empty string/,
    );
  });

  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', 'orderId=1'],
    ['a Map', new Map()],
    ['a class instance', new (class Args {})()],
    ['undefined', undefined],
  ])('refuses arguments that are %s', (_case, args) => {
    const error = derivationError({ ...base, arguments: args as unknown as Record<string, unknown> });
    expect(error.message).toMatch(/the arguments must be a plain object/);
    expect(error.tool).toBe('refund');
  });

  it('refuses a tenant or tool name no store accepts (nameProblem), naming the field', () => {
    const tenant = (value: unknown) => derivationError({ ...base, tenant: value as string, arguments: {} });
    const tool = (value: unknown) => derivationError({ ...base, tool: value as string, arguments: {} });
    for (const [value, reason] of [
      ['', /the tenant must not be empty/],
      [7, /the tenant must be a string, got number/],
      ['t'.repeat(257), /the tenant must be at most 256 characters, got 257/],
      ['a\u0000b', /the tenant must not contain NUL/],
      ['a\udc00', /the tenant must be well-formed Unicode/],
    ] as const) {
      const error = tenant(value);
      expect(error.message).toMatch(reason);
      expect(error.field).toBe('tenant');
      expect(error.tool).toBe('refund');
    }
    expect(idempotencyKey({ ...base, tenant: 't'.repeat(256), arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
    for (const [value, reason] of [
      ['', /the tool name must not be empty/],
      [undefined, /the tool name must be a string, got undefined/],
      ['x'.repeat(257), /the tool name must be at most 256 characters/],
      ['a\u0000b', /the tool name must not contain NUL/],
      ['\ud800x', /the tool name must be well-formed Unicode/],
    ] as const) {
      const error = tool(value);
      expect(error.message).toMatch(reason);
      expect(error.field).toBe('tool');
    }
    expect(tool(undefined).tool).toBe('undefined');
    // The name in the error is escaped and cut: a megabyte name does not make a megabyte message.
    const long = tool('y'.repeat(1_000_000));
    expect(long.message.length).toBeLessThan(400);
    expect(tool('a\u0000b').tool).toBe('"a\\u0000b"');
  });

  it('refuses a run id or call id that is too long or not well-formed (they are hashed, never stored)', () => {
    expect(idempotencyKey({ ...base, runId: 'r'.repeat(MAX_ID_LENGTH), arguments: {} })).toMatch(
      /^[0-9a-f]{64}$/,
    );
    const long = derivationError({ ...base, runId: 'r'.repeat(MAX_ID_LENGTH + 1), arguments: {} });
    expect(long.message).toMatch(/the run id must be at most 1024 characters, got 1025/);
    expect(long.field).toBe('runId');
    const lone = derivationError({ ...base, runId: 'run-\ud800', arguments: {} });
    expect(lone.message).toMatch(/the run id must be well-formed Unicode/);
    expect(lone.field).toBe('runId');
    const call = { ...base, arguments: {}, key: 'call' as const };
    expect(idempotencyKey({ ...call, callId: 'c'.repeat(MAX_ID_LENGTH) })).toMatch(/^[0-9a-f]{64}$/);
    expect(derivationError({ ...call, callId: 'c'.repeat(MAX_ID_LENGTH + 1) }).field).toBe('callId');
    expect(derivationError({ ...call, callId: '\udfffx' }).message).toMatch(
      /tool call id must be well-formed/,
    );
    // NUL is fine in a hashed id (it is escaped as \u0000); only stored names refuse it.
    expect(idempotencyKey({ ...base, runId: 'a\u0000b', arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
    // Unused ids are not looked at: scope 'tenant' ignores the run id, other keys the call id.
    expect(idempotencyKey({ ...base, scope: 'tenant', runId: '\ud800', arguments: {} })).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(idempotencyKey({ ...base, callId: 'x'.repeat(5000), arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses unknown strategies and scopes, empty or malformed keyArguments, and keyArguments with another strategy', () => {
    expect(derivationError({ ...base, arguments: {}, key: 'args' as 'call' }).message).toMatch(
      /the key must be/,
    );
    expect(derivationError({ ...base, arguments: {}, scope: 'global' as 'run' }).message).toMatch(
      /the scope must be/,
    );
    expect(derivationError({ ...base, arguments: { a: 1 }, keyArguments: [] }).message).toMatch(
      /keyArguments is empty/,
    );
    expect(derivationError({ ...base, arguments: { a: 1 }, keyArguments: [''] }).message).toMatch(
      /non-empty names/,
    );
    expect(
      derivationError({ ...base, arguments: { a: 1 }, keyArguments: 'a' as unknown as string[] }).message,
    ).toMatch(/must be an array/);
    expect(
      derivationError({ ...base, arguments: { a: 1 }, keyArguments: ['a'], key: 'call', callId: 'c' })
        .message,
    ).toMatch(/only to the 'arguments' key strategy/);
  });

  it('turns a CanonicalizationError into a KeyDerivationError with it as cause and its path (relative to the arguments) in the message', () => {
    const error = derivationError({ ...base, arguments: { order: { amount: Number.NaN } } });
    expect(error.message).toContain('at "/order/amount"');
    expect(error.message).toContain('NaN is not a JSON number');
    expect(CanonicalizationError.isInstance(error.cause)).toBe(true);
    expect((error.cause as CanonicalizationError).path).toBe('/order/amount');

    const subset = derivationError({ ...base, arguments: { id: 10n, x: Number.NaN }, keyArguments: ['id'] });
    expect((subset.cause as CanonicalizationError).path).toBe('/id');
    expect(subset.message).toMatch(/BigInt/);

    const business = derivationError({ ...base, arguments: {}, key: () => 'refund:\ud800' });
    expect(business.message).toMatch(/the business key cannot be canonicalized: .*lone surrogate/);
    expect(CanonicalizationError.isInstance(business.cause)).toBe(true);

    expect(business.field).toBe('key');
  });

  it('turns an error thrown while reading an argument (a getter) into a KeyDerivationError with it as cause', () => {
    const boom = new Error('getter failed');
    const args = {
      get amount(): number {
        throw boom;
      },
    };
    const error = derivationError({ ...base, arguments: args });
    expect(error.message).toMatch(
      /the arguments cannot be canonicalized at "\/amount": reading the value threw Error: getter failed/,
    );
    expect(error.field).toBe('arguments');
    expect(CanonicalizationError.isInstance(error.cause)).toBe(true);
    expect((error.cause as CanonicalizationError).path).toBe('/amount');
    expect((error.cause as CanonicalizationError).cause).toBe(boom);
    // A key argument's own getter: the thrown error is the cause, the argument is named.
    const keyed = derivationError({ ...base, arguments: args, keyArguments: ['amount'] });
    expect(keyed.argument).toBe('amount');
    expect(keyed.cause).toBe(boom);
  });

  it('lets an argument outside keyArguments be anything (it is not encoded)', () => {
    expect(idempotencyKey({ ...base, arguments: { id: 1, blob: new Map() }, keyArguments: ['id'] })).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });
});

describe('argumentsFingerprint', () => {
  it('is the SHA-256 of the canonical full arguments', () => {
    const args = { b: [1, 2], a: 'x' };
    expect(argumentsFingerprint(args)).toBe(sha256('{"a":"x","b":[1,2]}'));
    expect(argumentsFingerprint({ a: 'x', b: [1, 2] })).toBe(argumentsFingerprint(args));
    expect(argumentsFingerprint({ a: 'x', b: [2, 1] })).not.toBe(argumentsFingerprint(args));
    expect(argumentsFingerprint({})).toBe(sha256('{}'));
  });

  it('throws CanonicalizationError (not a KeyDerivationError) for values it cannot encode', () => {
    try {
      argumentsFingerprint({ a: [Number.POSITIVE_INFINITY] });
      expect.fail('expected a CanonicalizationError');
    } catch (error) {
      expect(CanonicalizationError.isInstance(error)).toBe(true);
      expect((error as CanonicalizationError).path).toBe('/a/0');
    }
  });
});

describe('properties', () => {
  const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 });
  // Keys NFC-normalised (duplicates merged) so that no generated object is refused.
  const args = fc
    .dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
    .map((value) =>
      Object.fromEntries(Object.entries(value).map(([key, member]) => [key.normalize('NFC'), member])),
    );

  it('the envelope equals canonicalJson of the envelope object, for every strategy and scope', () => {
    fc.assert(
      fc.property(
        text,
        text,
        text,
        text,
        args,
        fc.constantFrom('arguments', 'call', 'business'),
        fc.constantFrom('run', 'tenant'),
        (tenant, runId, tool, id, argumentsValue, strategy, scope) => {
          const normal = JSON.parse(JSON.stringify(argumentsValue)) as Record<string, unknown>;
          const input: KeyInput =
            strategy === 'arguments'
              ? { tenant, runId, tool, arguments: normal, scope }
              : strategy === 'call'
                ? { tenant, runId, tool, arguments: normal, scope, key: 'call', callId: id }
                : { tenant, runId, tool, arguments: normal, scope, key: () => id };
          const tagged =
            strategy === 'arguments'
              ? { arguments: normal }
              : strategy === 'call'
                ? { call: id }
                : { business: id };
          let expected: string;
          try {
            expected = canonicalJson(envelope(input, tagged));
          } catch (error) {
            // e.g. two generated keys equal after NFC: both ways must refuse.
            expect(CanonicalizationError.isInstance(error)).toBe(true);
            expect(() => canonicalEnvelope(input)).toThrow(KeyDerivationError);
            return;
          }
          expect(canonicalEnvelope(input)).toBe(expected);
          expect(idempotencyKey(input)).toBe(sha256(expected));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('argument order never changes the key', () => {
    fc.assert(
      fc.property(args, (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        expect(idempotencyKey({ ...base, arguments: reversed })).toBe(
          idempotencyKey({ ...base, arguments: value }),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('different canonical arguments give different keys', () => {
    fc.assert(
      fc.property(args, args, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(idempotencyKey({ ...base, arguments: a })).not.toBe(idempotencyKey({ ...base, arguments: b }));
      }),
      { numRuns: 200 },
    );
  });
});

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
