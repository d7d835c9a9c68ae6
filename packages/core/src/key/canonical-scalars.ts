// Strings, keys and numbers in canonical form (RFC 8785 sections 3.2.2.2 and 3.2.2.3, strings and
// keys in Unicode NFC), and the order of object keys (section 3.2.3).
import { Fault, hex, showKey } from './canonical-fault.js';

/** Strings that need neither escaping (RFC 8785 §3.2.2.2) nor NFC normalisation. */
export const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Any code unit above ASCII. NFC of ASCII is the string itself (UAX #15): `normalize` is skipped. */
export const NON_ASCII = /[\u0080-\uffff]/;

/**
 * A lone (unpaired) surrogate. In a `u` regular expression a surrogate pair is one code point
 * (not in the surrogate range), so only unpaired surrogate code units match.
 */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new Fault(`${String(value)} is not a JSON number (RFC 8785 section 3.2.2.3)`);
  }
  // Number::toString (ECMA-262 §6.1.6.1.20) is RFC 8785's number format; it writes -0 as "0".
  return String(value);
}

/**
 * Sort strings by UTF-16 code units, the order of RFC 8785 section 3.2.3 (JavaScript's `<` on
 * strings and the default `sort` both compare code units). Insertion sort for the few keys of a
 * typical argument object: several times faster there than `Array.prototype.sort`.
 */
export function sortKeys(keys: string[]): void {
  const length = keys.length;
  if (length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
}

/** The NFC form of a key, refusing lone surrogates. */
export function normalizeKey(key: string): string {
  if (!NON_ASCII.test(key)) return key;
  const lone = LONE_SURROGATE.exec(key);
  if (lone !== null) {
    throw new Fault(
      `the key ${showKey(key)} has a lone surrogate U+${hex(lone[0])} at index ${lone.index}; ` +
        'RFC 8785 requires well-formed Unicode',
    );
  }
  return key.normalize('NFC');
}

/**
 * Quote a string per RFC 8785 section 3.2.2.2 after NFC normalisation. `JSON.stringify`'s
 * escaping (ECMA-262 QuoteJSONString) is RFC 8785's for well-formed strings: the same short
 * escapes, `\u00xx` in lowercase hex for the other controls, everything else literal. It differs
 * only in escaping lone surrogates, which are refused before it is called.
 */
export function quote(value: string): string {
  if (PLAIN_ASCII.test(value)) return '"' + value + '"';
  if (!NON_ASCII.test(value)) return JSON.stringify(value);
  const lone = LONE_SURROGATE.exec(value);
  if (lone !== null) {
    throw new Fault(
      `the string has a lone surrogate U+${hex(lone[0])} at index ${lone.index}; ` +
        'RFC 8785 requires well-formed Unicode',
    );
  }
  return JSON.stringify(value.normalize('NFC'));
}
