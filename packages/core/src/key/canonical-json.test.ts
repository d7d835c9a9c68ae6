import { readdirSync, readFileSync } from 'node:fs';
import canonicalize from 'canonicalize';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical-json.js';
import { mapStrings, nfc, refusedAt, rfc8785, rfcEscape } from './key.test-support.js';

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
