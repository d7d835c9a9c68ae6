/**
 * C05 — the same arguments in another order give another key (layer: key hashing).
 * See docs/field-cases.md (C05) and docs/key-spec.md (RFC 8785 ordering).
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../packages/core/src/key/canonical-json.js';
import { idempotencyKey } from '../../packages/core/src/key/idempotency-key.js';

const key = (args: Record<string, unknown>): string =>
  idempotencyKey({ tenant: 'acme', runId: 'run-1', tool: 'create_profile', arguments: args });

describe('C05: the same arguments in another order give another key', () => {
  it('gives one key for the same nested object written in another order', () => {
    const first = { name: 'x', age: 30, addr: { st: '5th', no: 123 } };
    const second = { addr: { no: 123, st: '5th' }, age: 30, name: 'x' };
    expect(key(second)).toBe(key(first));
    expect(canonicalJson(first)).toBe('{"addr":{"no":123,"st":"5th"},"age":30,"name":"x"}');
  });

  it('gives two keys for [1, 2] and [2, 1]', () => {
    expect(key({ ids: [1, 2] })).not.toBe(key({ ids: [2, 1] }));
  });

  it('gives one key for keys that differ only in case, in either order', () => {
    expect(key({ A: 2, a: 1 })).toBe(key({ a: 1, A: 2 }));
    expect(canonicalJson({ a: 1, A: 2 })).toBe('{"A":2,"a":1}');
    // and the case-different keys stay two members: {a:1,A:2} is not {a:2,A:1}
    expect(key({ a: 1, A: 2 })).not.toBe(key({ a: 2, A: 1 }));
  });

  it('orders integer-like keys by UTF-16 code units ("10" before "9"), not JavaScript enumeration order', () => {
    const value = { 10: 1, 9: 2 };
    expect(Object.keys(value)).toEqual(['9', '10']);
    expect(canonicalJson(value)).toBe('{"10":1,"9":2}');
    expect(key({ 9: 2, 10: 1 })).toBe(key({ 10: 1, 9: 2 }));
  });
});
