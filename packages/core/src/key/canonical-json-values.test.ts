import { describe, expect, it } from 'vitest';
import { canonicalJson, MAX_NESTING_DEPTH } from './canonical-json.js';
import { refusal, refusedAt } from './key.test-support.js';

describe('values as JSON.stringify sees them', () => {
  it('omits undefined, function and symbol members; writes them as null in arrays; holes as null', () => {
    expect(canonicalJson({ a: undefined, b: () => 1, c: Symbol('c'), d: 1 })).toBe('{"d":1}');
    // biome-ignore lint/suspicious/noSparseArray: a hole is the point of the test
    expect(canonicalJson([undefined, () => 1, Symbol('c'), , 1])).toBe('[null,null,null,null,1]');
  });

  it('writes empty containers, literals and nested structures', () => {
    expect(canonicalJson({ a: {}, b: [], c: null, d: true, e: false, f: '' })).toBe(
      '{"a":{},"b":[],"c":null,"d":true,"e":false,"f":""}',
    );
    expect(canonicalJson([[[]], { a: [{}] }])).toBe('[[[]],{"a":[{}]}]');
  });

  it('honours toJSON (Date included) and passes the key as JSON.stringify does', () => {
    const keys: string[] = [];
    const probe = {
      toJSON(key: string) {
        keys.push(key);
        return { at: key };
      },
    };
    expect(canonicalJson({ when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 6)) })).toBe(
      '{"when":"2024-01-02T03:04:05.006Z"}',
    );
    expect(canonicalJson(new Date(Number.NaN))).toBe('null');
    expect(canonicalJson([probe, { m: probe }])).toBe('[{"at":"0"},{"m":{"at":"m"}}]');
    expect(canonicalJson(probe)).toBe('{"at":""}');
    expect(keys).toEqual(['0', 'm', '']);
    expect(JSON.stringify([probe, { m: probe }, probe])).toBe('[{"at":"0"},{"m":{"at":"m"}},{"at":"2"}]');
    class Money {
      constructor(readonly cents: number) {}
      toJSON() {
        return { cents: this.cents, currency: 'EUR' };
      }
    }
    expect(canonicalJson({ price: new Money(250) })).toBe('{"price":{"cents":250,"currency":"EUR"}}');
  });

  it('omits a member whose toJSON returns undefined, and refuses that at the root', () => {
    const nothing = { toJSON: () => undefined };
    expect(canonicalJson({ a: nothing, b: 1 })).toBe('{"b":1}');
    refusedAt(nothing, '', /returned by toJSON is undefined/);
  });

  it('unwraps boxed primitives', () => {
    expect(canonicalJson([new String('e\u0301'), new Number(-0), new Boolean(false), new Number(1e21)])).toBe(
      '["\u00e9",0,false,1e+21]',
    );
  });

  it('encodes the same object twice in sibling positions (not a cycle)', () => {
    const shared = { z: [1] };
    expect(canonicalJson({ a: shared, b: shared, c: [shared, shared] })).toBe(
      '{"a":{"z":[1]},"b":{"z":[1]},"c":[{"z":[1]},{"z":[1]}]}',
    );
  });

  it('accepts nesting of exactly MAX_NESTING_DEPTH containers', () => {
    expect(MAX_NESTING_DEPTH).toBe(1000);
    let value: unknown = 0;
    for (let i = 0; i < MAX_NESTING_DEPTH; i++) value = [value];
    expect(canonicalJson(value)).toBe(`${'['.repeat(1000)}0${']'.repeat(1000)}`);
  });
});

describe('refusals, each with its RFC 6901 path', () => {
  it('refuses BigInt, plain or boxed, even with a BigInt.prototype.toJSON installed', () => {
    refusedAt(1n, '', /BigInt/);
    refusedAt({ id: [10n] }, '/id/0', /BigInt/);
    refusedAt({ id: Object(10n) }, '/id', /BigInt/);
    const prototype = BigInt.prototype as { toJSON?: () => string };
    prototype.toJSON = function (this: bigint) {
      return this.toString();
    };
    try {
      expect(JSON.stringify({ id: 10n })).toBe('{"id":"10"}');
      refusedAt({ id: 10n }, '/id', /BigInt/);
    } finally {
      delete prototype.toJSON;
    }
  });

  it('refuses cycles through objects and arrays, naming the ancestor', () => {
    const object: Record<string, unknown> = { a: { b: {} } };
    (object.a as { b: Record<string, unknown> }).b.c = object.a;
    refusedAt(object, '/a/b/c', /cycle: the value is its own ancestor at "\/a"/);
    const array: unknown[] = [1];
    array.push(array);
    refusedAt({ list: array }, '/list/1', /its own ancestor at "\/list"/);
    const self: Record<string, unknown> = {};
    self.self = self;
    refusedAt(self, '/self', /its own ancestor at ""/);
  });

  it('refuses nesting deeper than 1000 with the path of the 1001st container', () => {
    let value: unknown = 0;
    for (let i = 0; i < MAX_NESTING_DEPTH + 1; i++) value = { k: value };
    refusedAt(value, '/k'.repeat(MAX_NESTING_DEPTH), /nested deeper than 1000/);
  });

  it('refuses depth 100000 with a CanonicalizationError, not a stack overflow', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) value = i % 2 === 0 ? [value] : { d: value };
    const error = refusal(() => canonicalJson(value));
    expect(error.message).toMatch(/nested deeper than 1000/);
    expect(error.path.split('/').length - 1).toBe(MAX_NESTING_DEPTH);
  });

  it.each([
    ['Map', new Map([['a', 1]]), /an instance of Map/],
    ['Set', new Set([1]), /an instance of Set/],
    ['WeakMap', new WeakMap(), /an instance of WeakMap/],
    ['Uint8Array', new Uint8Array([1, 2]), /a Uint8Array/],
    ['Float64Array', new Float64Array(1), /a Float64Array/],
    ['ArrayBuffer', new ArrayBuffer(4), /an instance of ArrayBuffer/],
    ['DataView', new DataView(new ArrayBuffer(4)), /a DataView/],
    ['RegExp', /x/g, /an instance of RegExp/],
    ['Error', new Error('boom'), /an instance of Error/],
    [
      'class instance',
      new (class Point {
        x = 1;
      })(),
      /an instance of Point/,
    ],
    ['object with a non-plain prototype', Object.create(Object.create(null)), /non-plain prototype/],
  ])('refuses a %s (no toJSON) at its path', (_name, value, reason) => {
    refusedAt({ args: [{ v: value }] }, '/args/0/v', reason);
    refusedAt(value, '', /not plain JSON data/);
  });

  it('refuses undefined, a function and a symbol at the root', () => {
    refusedAt(undefined, '', /undefined, a function or a symbol/);
    refusedAt(() => 1, '', /undefined, a function or a symbol/);
    refusedAt(Symbol('s'), '', /undefined, a function or a symbol/);
  });

  it('refuses a throwing toJSON, keeping the error as cause', () => {
    const boom = new Error('boom');
    const error = refusedAt(
      {
        a: [
          {
            toJSON() {
              throw boom;
            },
          },
        ],
      },
      '/a/0',
      /toJSON method threw/,
    );
    expect(error.cause).toBe(boom);
  });

  it('escapes "~" and "/" in paths (RFC 6901 section 3)', () => {
    refusedAt({ 'a/b': { 'c~d': { '~/': Number.NaN } } }, '/a~1b/c~0d/~0~1', /NaN/);
    refusedAt({ '': [Number.NaN] }, '//0', /NaN/);
  });

  it('names the key as written in the input (not its NFC form) in paths', () => {
    refusedAt({ 'e\u0301': Number.NaN }, '/e\u0301', /NaN/);
  });
});
