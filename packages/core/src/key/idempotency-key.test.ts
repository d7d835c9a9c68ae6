import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { argumentsFingerprint, canonicalEnvelope, idempotencyKey, type KeyInput } from './idempotency-key.js';
import { base, sha256 } from './key.test-support.js';

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
