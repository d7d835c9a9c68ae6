import { readdirSync, readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { canonicalJson, MAX_NESTING_DEPTH } from './canonical-json.js';

const rfc8785 = new URL('../../../../test/vectors/rfc8785/', import.meta.url);

/** Run `fn` and return the CanonicalizationError it throws (failing the test otherwise). */
function refusal(fn: () => unknown): CanonicalizationError {
  try {
    fn();
  } catch (error) {
    expect(CanonicalizationError.isInstance(error)).toBe(true);
    return error as CanonicalizationError;
  }
  throw new Error('expected a CanonicalizationError, nothing was thrown');
}

function refusedAt(value: unknown, path: string, reason: RegExp): CanonicalizationError {
  const error = refusal(() => canonicalJson(value));
  expect(error.path).toBe(path);
  expect(error.message).toMatch(reason);
  expect(error.code).toBe('CANONICALIZATION_FAILED');
  return error;
}

/**
 * RFC 8785 section 3.2.2.2, written out one code unit at a time (the reference the fast
 * JSON.stringify-based escaping is checked against).
 */
function rfcEscape(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const short: Record<number, string> = {
      8: '\\b',
      9: '\\t',
      10: '\\n',
      12: '\\f',
      13: '\\r',
      34: '\\"',
      92: '\\\\',
    };
    if (short[unit] !== undefined) out += short[unit];
    else if (unit < 0x20) out += '\\u' + unit.toString(16).padStart(4, '0');
    else out += text[i];
  }
  return out + '"';
}

/** Deeply rebuild a JSON value, mapping every string and key. Later keys win on collision. */
function mapStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, map));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) {
      Object.defineProperty(out, map(key), {
        value: mapStrings(member, map),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

/** Deeply rebuild a JSON value with every object's keys inserted in an order drawn from `order`. */
function shuffleKeys(value: unknown, order: () => number): unknown {
  if (Array.isArray(value)) return value.map((item) => shuffleKeys(item, order));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = order() % (i + 1);
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    const out: Record<string, unknown> = {};
    for (const [key, member] of entries) {
      Object.defineProperty(out, key, {
        value: shuffleKeys(member, order),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

const nfc = (text: string): string => text.normalize('NFC');
const nfd = (text: string): string => text.normalize('NFD');
/** Letters with composed and decomposed forms, plus plain text, for NFC properties. */
const accented = fc.string({
  unit: fc.constantFrom(
    'a',
    'e',
    'E',
    'o',
    'Z',
    '1',
    ' ',
    'é',
    'e\u0301',
    'Å',
    'A\u030a',
    'ñ',
    'ṩ',
    'Ω',
    'ﬀ',
    '한',
    '😂',
  ),
  maxLength: 6,
});
const unicodeJson = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });

describe('RFC 8785 published test data (cyberphone/json-canonicalization testdata)', () => {
  const names = readdirSync(new URL('input/', rfc8785)).filter((name) => name.endsWith('.json'));

  it('has the six published input/output pairs', () => {
    expect(names.sort()).toEqual([
      'arrays.json',
      'french.json',
      'structures.json',
      'unicode.json',
      'values.json',
      'weird.json',
    ]);
  });

  // All strings of these four are already NFC, so NFC changes nothing and the output is RFC 8785's.
  for (const name of ['arrays.json', 'french.json', 'structures.json', 'values.json']) {
    it(`canonicalizes ${name} exactly as published`, () => {
      const input: unknown = JSON.parse(readFileSync(new URL(`input/${name}`, rfc8785), 'utf8'));
      const output = readFileSync(new URL(`output/${name}`, rfc8785), 'utf8');
      expect(canonicalJson(input)).toBe(output);
      expect(canonicalize(input)).toBe(output);
      expect(nfc(output)).toBe(output);
    });
  }

  it('unicode.json: plain RFC 8785 keeps "A\u030a"; toolfence adds NFC and writes "\u00c5" (a deliberate difference)', () => {
    const input: unknown = JSON.parse(readFileSync(new URL('input/unicode.json', rfc8785), 'utf8'));
    const output = readFileSync(new URL('output/unicode.json', rfc8785), 'utf8');
    expect(output).toBe('{"Unnormalized Unicode":"A\u030a"}');
    expect(canonicalize(input)).toBe(output);
    expect(canonicalJson(input)).toBe('{"Unnormalized Unicode":"\u00c5"}');
  });

  it('weird.json: NFC turns key U+FB33 into U+05D3 U+05BC (a composition exclusion), which sorts before "\u20ac" (a deliberate difference)', () => {
    const input: unknown = JSON.parse(readFileSync(new URL('input/weird.json', rfc8785), 'utf8'));
    const output = readFileSync(new URL('output/weird.json', rfc8785), 'utf8');
    expect(canonicalize(input)).toBe(output);
    expect(nfc('\ufb33')).toBe('\u05d3\u05bc');
    expect(output).toBe(
      '{"\\n":"Newline","\\r":"Carriage Return","1":"One","</script>":"Browser Challenge",' +
        '"\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",' +
        '"\ud83d\ude02":"Smiley","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
    );
    expect(canonicalJson(input)).toBe(
      '{"\\n":"Newline","\\r":"Carriage Return","1":"One","</script>":"Browser Challenge",' +
        '"\u0080":"Control\u007f","\u00f6":"Latin Small Letter O With Diaeresis",' +
        '"\u05d3\u05bc":"Hebrew Letter Dalet With Dagesh","\u20ac":"Euro Sign","\ud83d\ude02":"Smiley"}',
    );
  });

  it('every published input gives RFC 8785 of its NFC form', () => {
    for (const name of names) {
      const input: unknown = JSON.parse(readFileSync(new URL(`input/${name}`, rfc8785), 'utf8'));
      expect(canonicalJson(input)).toBe(canonicalize(mapStrings(input, nfc)));
    }
  });
});

describe('numbers (RFC 8785 section 3.2.2.3 and Appendix B)', () => {
  // RFC 8785 Appendix B: IEEE 754 bit patterns and their required JSON form.
  const appendixB: ReadonlyArray<readonly [string, string]> = [
    ['0000000000000000', '0'],
    ['8000000000000000', '0'],
    ['0000000000000001', '5e-324'],
    ['8000000000000001', '-5e-324'],
    ['7fefffffffffffff', '1.7976931348623157e+308'],
    ['ffefffffffffffff', '-1.7976931348623157e+308'],
    ['4340000000000000', '9007199254740992'],
    ['c340000000000000', '-9007199254740992'],
    ['4430000000000000', '295147905179352830000'],
    ['44b52d02c7e14af5', '9.999999999999997e+22'],
    ['44b52d02c7e14af6', '1e+23'],
    ['44b52d02c7e14af7', '1.0000000000000001e+23'],
    ['444b1ae4d6e2ef4e', '999999999999999700000'],
    ['444b1ae4d6e2ef4f', '999999999999999900000'],
    ['444b1ae4d6e2ef50', '1e+21'],
    ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
    ['3eb0c6f7a0b5ed8d', '0.000001'],
    ['41b3de4355555553', '333333333.3333332'],
    ['41b3de4355555554', '333333333.33333325'],
    ['41b3de4355555555', '333333333.3333333'],
    ['41b3de4355555556', '333333333.3333334'],
    ['41b3de4355555557', '333333333.33333343'],
    ['becbf647612f3696', '-0.0000033333333333333333'],
    ['43143ff3c1cb0959', '1424953923781206.2'],
  ];
  const fromBits = (hex: string): number => {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, BigInt(`0x${hex}`));
    return view.getFloat64(0);
  };

  it.each(appendixB)('%s is written %s', (bits, expected) => {
    expect(canonicalJson(fromBits(bits))).toBe(expected);
    expect(canonicalJson([fromBits(bits)])).toBe(`[${expected}]`);
  });

  it.each([
    ['7fffffffffffffff', 'NaN'],
    ['7ff0000000000000', 'Infinity'],
    ['fff0000000000000', '-Infinity'],
  ])('Appendix B %s (%s) has no JSON form and is refused', (bits, name) => {
    refusedAt({ n: [fromBits(bits)] }, '/n/0', new RegExp(`${name} is not a JSON number`));
  });

  it.each([
    [1e21, '1e+21'],
    [1e20, '100000000000000000000'],
    [1e-7, '1e-7'],
    [1e-6, '0.000001'],
    [-0, '0'],
    [0.1 + 0.2, '0.30000000000000004'],
    [5e-324, '5e-324'],
    [2.0, '2'],
    [-1.5, '-1.5'],
    [2 ** 53 + 2, '9007199254740994'],
  ])('%d is written %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('parses 2 and 2.0 (distinct only in JSON text) to one number, so one form', () => {
    expect(canonicalJson(JSON.parse('{"a":2.0}'))).toBe(canonicalJson(JSON.parse('{"a":2}')));
  });

  it('refuses NaN and the infinities wherever they are', () => {
    refusedAt(Number.NaN, '', /NaN is not a JSON number/);
    refusedAt({ a: { b: Number.POSITIVE_INFINITY } }, '/a/b', /Infinity/);
    refusedAt([0, Number.NEGATIVE_INFINITY], '/1', /-Infinity/);
    refusedAt({ n: new Number(Number.NaN) }, '/n', /NaN/);
  });
});

describe('strings (RFC 8785 section 3.2.2.2)', () => {
  it('escapes exactly the RFC 8785 set: \\b \\t \\n \\f \\r, other controls as \\u00xx, " and \\', () => {
    expect(canonicalJson('\u0000\u0001\b\t\n\u000b\f\r\u000e\u001f "\\/\u007f\u0080\u2028\u2029')).toBe(
      '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u000e\\u001f \\"\\\\/\u007f\u0080\u2028\u2029"',
    );
  });

  it('matches the code-unit-by-code-unit RFC 8785 escaper for every non-surrogate BMP code unit', () => {
    const mismatches: number[] = [];
    for (let unit = 0; unit <= 0xffff; unit++) {
      if (unit >= 0xd800 && unit <= 0xdfff) continue;
      const text = `a${String.fromCharCode(unit)}z`;
      if (canonicalJson(text) !== rfcEscape(nfc(text))) mismatches.push(unit);
    }
    expect(mismatches).toEqual([]);
  });

  it("JSON.stringify's escaping equals RFC 8785 for well-formed strings, and escapes lone surrogates (why they are refused first)", () => {
    for (let unit = 0; unit <= 0xffff; unit++) {
      const text = String.fromCharCode(unit);
      if (unit >= 0xd800 && unit <= 0xdfff) {
        expect(JSON.stringify(text)).toBe(`"\\u${unit.toString(16)}"`);
      } else if (JSON.stringify(text) !== rfcEscape(text)) {
        expect.fail(`U+${unit.toString(16)} escapes differently`);
      }
    }
    expect(JSON.stringify('\ud83d\ude02')).toBe('"\ud83d\ude02"');
  });

  it('writes astral characters (surrogate pairs) literally', () => {
    expect(canonicalJson('😂𝄞')).toBe('"😂𝄞"');
  });

  it('normalises strings to NFC', () => {
    expect(canonicalJson('e\u0301')).toBe('"\u00e9"');
    expect(canonicalJson('\u212b')).toBe('"\u00c5"'); // ANGSTROM SIGN → LATIN CAPITAL A WITH RING
    expect(canonicalJson('\u1e9b\u0323')).toBe('"\u1e9b\u0323"'); // NFC, not NFKC
  });

  it('refuses lone surrogates in strings (high, low, reversed pair) with the path', () => {
    refusedAt('\ud800', '', /lone surrogate U\+D800 at index 0/);
    refusedAt({ a: ['ok', 'x\udc00'] }, '/a/1', /lone surrogate U\+DC00 at index 1/);
    refusedAt({ a: '\ude02\ud83d' }, '/a', /lone surrogate U\+DE02/);
    refusedAt({ a: 'é\ud83d' }, '/a', /lone surrogate U\+D83D at index 1/);
  });
});

describe('objects (RFC 8785 section 3.2.3)', () => {
  it('sorts keys by UTF-16 code units, not in JavaScript enumeration order', () => {
    expect(canonicalJson({ 9: 'nine', 10: 'ten', b: 1, a: 2 })).toBe('{"10":"ten","9":"nine","a":2,"b":1}');
    expect(canonicalJson({ a: 1, A: 2 })).toBe('{"A":2,"a":1}');
    expect(canonicalJson({ A: 2, a: 1 })).toBe('{"A":2,"a":1}');
    // U+1F602 is D83D DE02 in UTF-16, so it sorts before U+FF21 (and after it by code point).
    expect(canonicalJson({ '\uff21': 1, '😂': 2, '\u00f6': 3 })).toBe('{"\u00f6":3,"😂":2,"\uff21":1}');
  });

  it('sorts many keys (the non-insertion-sort path) the same way', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `k${(i * 7919) % 40}`);
    const object = Object.fromEntries(keys.map((key) => [key, key]));
    const sorted = [...keys].sort();
    expect(canonicalJson(object)).toBe(`{${sorted.map((key) => `"${key}":"${key}"`).join(',')}}`);
  });

  it('escapes keys like strings', () => {
    expect(canonicalJson({ 'a"b': 1, 'line\n': 2, '\u0001': 3 })).toBe('{"\\u0001":3,"a\\"b":1,"line\\n":2}');
  });

  it('normalises keys to NFC before sorting', () => {
    // NFD "e\u0301" would sort before "f"; its NFC form "\u00e9" sorts after "z".
    expect(canonicalJson({ 'e\u0301': 1, f: 2, z: 3 })).toBe('{"f":2,"z":3,"\u00e9":1}');
  });

  it('refuses two keys equal after NFC, at the object', () => {
    const error = refusedAt({ x: [{ '\u00e9': 1, 'e\u0301': 2 }] }, '/x/0', /equal after NFC/);
    expect(error.message).toContain('"\\u00E9"');
    expect(error.message).toContain('"e\\u0301"');
    refusedAt({ '\u212b': 1, '\u00c5': 2 }, '', /equal after NFC/);
  });

  it('refuses a key with a lone surrogate, at the object holding it', () => {
    refusedAt({ a: { 'k\udfff': 1 } }, '/a', /the key "k\\udfff" has a lone surrogate U\+DFFF at index 1/);
  });

  it('reads own enumerable string keys only', () => {
    const object: Record<string | symbol, unknown> = { a: 1, [Symbol('s')]: 2 };
    Object.defineProperty(object, 'hidden', { value: 3, enumerable: false });
    expect(canonicalJson(object)).toBe('{"a":1}');
    expect(canonicalJson(Object.assign(Object.create(null), { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });
});

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

describe('properties', () => {
  it('key insertion order never changes the output', () => {
    fc.assert(
      fc.property(unicodeJson, fc.array(fc.nat(), { minLength: 1, maxLength: 50 }), (value, draws) => {
        let index = 0;
        const order = (): number => draws[index++ % draws.length]!;
        expect(canonicalJson(shuffleKeys(value, order))).toBe(canonicalJson(value));
      }),
      { numRuns: 300 },
    );
  });

  it('NFD and NFC spellings of every string and key give the same output', () => {
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        accented,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(accented, tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (input) => {
        const composed = mapStrings(input, nfc);
        const decomposed = mapStrings(input, nfd);
        expect(canonicalJson(decomposed)).toBe(canonicalJson(composed));
      }),
      { numRuns: 300 },
    );
  });

  it('equals the independent `canonicalize` package on NFC-normal JSON values', () => {
    fc.assert(
      fc.property(
        unicodeJson.map((value) => mapStrings(value, nfc)),
        (value) => {
          fc.pre(!hasLoneSurrogate(value));
          expect(canonicalJson(value)).toBe(canonicalize(value));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('output parses back to the same value and is a fixed point', () => {
    fc.assert(
      fc.property(
        unicodeJson.map((value) => mapStrings(value, nfc)),
        (value) => {
          fc.pre(!hasLoneSurrogate(value));
          const text = canonicalJson(value);
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
          expect(canonicalJson(JSON.parse(text))).toBe(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('throws nothing but CanonicalizationError, and returns parseable JSON, for any value', () => {
    const anything = fc.anything({
      withBigInt: true,
      withBoxedValues: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withNullPrototype: true,
      withObjectString: true,
      withSparseArray: true,
      withTypedArray: true,
      withUnicodeString: true,
      stringUnit: 'binary',
    });
    fc.assert(
      fc.property(anything, (value) => {
        let text: string;
        try {
          text = canonicalJson(value);
        } catch (error) {
          expect(CanonicalizationError.isInstance(error)).toBe(true);
          return;
        }
        expect(typeof JSON.parse(text)).not.toBe('undefined');
      }),
      { numRuns: 1000 },
    );
  });
});

function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return /[\ud800-\udfff]/u.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, member]) => hasLoneSurrogate(key) || hasLoneSurrogate(member));
  }
  return false;
}
