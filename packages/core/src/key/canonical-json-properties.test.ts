import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { canonicalJson } from './canonical-json.js';
import {
  accented,
  hasLoneSurrogate,
  mapStrings,
  nfc,
  nfd,
  shuffleKeys,
  unicodeJson,
} from './key.test-support.js';

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
