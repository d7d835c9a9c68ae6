// canonicalJson: RFC 8785 canonical JSON of a JavaScript value, as JSON.stringify sees it, with
// strings and keys in NFC. The walk over arrays and objects is here; strings and numbers are in
// canonical-scalars.ts, objects that are not plain data in canonical-non-plain.ts, refusals and
// their paths in canonical-fault.ts.
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import {
  bigIntFault,
  describeThrown,
  Fault,
  faultAt,
  pointer,
  type Segment,
  showKey,
  tooLong,
} from './canonical-fault.js';
import { MAX_CANONICAL_LENGTH, MAX_NESTING_DEPTH } from './canonical-limits.js';
import { encodeNonPlain } from './canonical-non-plain.js';
import { encodeNumber, normalizeKey, PLAIN_ASCII, quote, sortKeys } from './canonical-scalars.js';

export { describeThrown } from './canonical-fault.js';
export { MAX_CANONICAL_LENGTH, MAX_NESTING_DEPTH } from './canonical-limits.js';

/**
 * Encode `value` as canonical JSON: RFC 8785 (JSON Canonicalization Scheme, JCS) applied to the
 * value as `JSON.stringify` sees it, with every string and every object key normalised to
 * Unicode NFC (`String.prototype.normalize('NFC')`, UAX #15) first.
 *
 * What is encoded, following `JSON.stringify` (ECMA-262 §25.5.2 SerializeJSONProperty):
 * - A callable `toJSON` member is called with the member's key (`""` at the root, the decimal
 *   index in arrays) and its result is encoded instead (so a `Date` becomes its ISO string).
 * - Boxed primitives (`new String`, `new Number`, `new Boolean`) are unwrapped.
 * - Object members whose value is `undefined`, a function or a symbol are omitted; in arrays
 *   such values (and holes) become `null`. Only own enumerable string keys are read.
 *
 * How it is written (RFC 8785 §3.2):
 * - No whitespace. Object members sorted by the UTF-16 code units of their NFC-normalised key
 *   (RFC 8785 §3.2.3), so `"10"` sorts before `"9"` and `"A"` before `"a"`.
 * - Strings: `"` and `\` escaped as `\"` and `\\`; U+0008, U+0009, U+000A, U+000C, U+000D as
 *   `\b`, `\t`, `\n`, `\f`, `\r`; the other controls below U+0020 as `\u00xx` (lowercase hex);
 *   everything else literal, including U+007F, `/` and non-ASCII (RFC 8785 §3.2.2.2).
 * - Numbers as ECMAScript `Number.prototype.toString` writes them (RFC 8785 §3.2.2.3):
 *   `1e21` → `1e+21`, `1e-7` → `1e-7`, `-0` → `0`, `5e-324` → `5e-324`.
 * - `true`, `false`, `null` as themselves.
 *
 * The result is a JavaScript string; hash its UTF-8 encoding (RFC 8785 §3.2.4). The algorithm is
 * specified for other languages in `docs/key-spec.md`.
 *
 * @param value any JavaScript value.
 * @returns the canonical JSON text.
 * @throws CanonicalizationError with `path`, an RFC 6901 JSON pointer (`~` written `~0`, `/`
 *   written `~1`; `""` is the root) to the offending value, for:
 *   - a number that is NaN, `Infinity` or `-Infinity` (RFC 8785 §3.2.2.3 has no form for them);
 *   - a BigInt, boxed or not, even with a `BigInt.prototype.toJSON` installed (JSON has no
 *     integers beyond IEEE 754 doubles; send large ids as strings);
 *   - a string with a lone surrogate (RFC 8785 §3.2.2.2 requires well-formed Unicode); for a key
 *     with one, the path is that of the object holding the key;
 *   - a cycle: a container that is its own ancestor (the same object in two sibling positions is
 *     not a cycle and is encoded twice);
 *   - two keys of one object that are equal after NFC (path of the object);
 *   - nesting deeper than {@link MAX_NESTING_DEPTH};
 *   - an object whose prototype is neither `Object.prototype` nor `null`, is not an array, has no
 *     callable `toJSON` and is not a boxed primitive (`Map`, `Set`, `WeakMap`, typed arrays,
 *     `ArrayBuffer`, `DataView`, `RegExp`, `Error`, class instances...): `JSON.stringify` would
 *     silently write `{}` or an index map of them. Plain objects from another realm (`vm`)
 *     count as such instances too;
 *   - a `toJSON` method that throws (the error is kept as `cause`);
 *   - `undefined`, a function or a symbol at the root (where `JSON.stringify` returns
 *     `undefined`, not a JSON text);
 *   - a canonical text longer than {@link MAX_CANONICAL_LENGTH} code units (path `""`);
 *   - anything thrown while the value is read: a getter, a Proxy trap (a revoked Proxy throws
 *     from every trap), or a stack overflow; the thrown value is kept as `cause` (the path is
 *     that of the value being read). A Proxy is otherwise read through its traps, as
 *     `JSON.stringify` reads it.
 *   Nothing else is thrown, whatever `value` is.
 */
export function canonicalJson(value: unknown): string {
  const ancestors: object[] = [];
  let text: string | undefined;
  try {
    text = encode(value, '', ancestors);
    if (text !== undefined && text.length > MAX_CANONICAL_LENGTH) throw tooLong();
  } catch (caught) {
    const error = faultAt(caught, undefined);
    const segments = error.segments.reverse();
    let reason = error.reason;
    if (error.ancestorDepth !== undefined) {
      reason += ` at "${pointer(segments.slice(0, error.ancestorDepth))}"`;
    }
    throw new CanonicalizationError(
      pointer(segments),
      reason,
      error.cause === undefined ? undefined : { cause: error.cause },
    );
  }
  if (text === undefined) {
    throw new CanonicalizationError(
      '',
      // An object encodes to text unless its toJSON returned one of these.
      `the value${typeof value === 'object' && value !== null ? ' returned by toJSON' : ''} is undefined, a function or a symbol, ` +
        'which has no JSON form (JSON.stringify returns undefined for it)',
    );
  }
  return text;
}

function callToJSON(toJSON: (this: unknown, key: string) => unknown, value: unknown, key: string): unknown {
  try {
    return toJSON.call(value, key);
  } catch (error) {
    throw new Fault(`its toJSON method threw ${describeThrown(error)}`, error);
  }
}

/**
 * Encode one value. Returns `undefined` for what `JSON.stringify` omits (`undefined`, functions,
 * symbols, after `toJSON`).
 */
function encode(input: unknown, key: Segment, ancestors: object[]): string | undefined {
  let value = input;
  if (value !== null && (typeof value === 'object' || typeof value === 'function')) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === 'function') {
      value = callToJSON(
        toJSON as (key: string) => unknown,
        value,
        typeof key === 'number' ? String(key) : key,
      );
    }
  }
  switch (typeof value) {
    case 'string':
      return quote(value);
    case 'number':
      return encodeNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (value === null) return 'null';
      return encodeObject(value, ancestors);
    case 'bigint':
      throw bigIntFault();
    default:
      // undefined, function, symbol: omitted by JSON.stringify.
      return undefined;
  }
}

function encodeObject(value: object, ancestors: object[]): string {
  if (Array.isArray(value)) {
    enter(value, ancestors);
    return encodeArray(value, ancestors);
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return encodeNonPlain(value);
  enter(value, ancestors);
  return encodeMembers(value as Record<string, unknown>, ancestors);
}

/** Refuse a container nested too deep or already on the current path (a cycle). */
function enter(value: object, ancestors: object[]): void {
  if (ancestors.length >= MAX_NESTING_DEPTH) {
    throw new Fault(`the value is nested deeper than ${MAX_NESTING_DEPTH} arrays and objects`);
  }
  const at = ancestors.indexOf(value);
  if (at !== -1) throw new Fault('cycle: the value is its own ancestor', undefined, at);
}

function encodeArray(array: readonly unknown[], ancestors: object[]): string {
  const length = array.length;
  if (length === 0) return '[]';
  ancestors.push(array);
  let out = '[';
  let index = 0;
  try {
    for (; index < length; index++) {
      const item = encode(array[index], index, ancestors);
      // One append per item (a short ',' + item is copied flat), so a long array makes half as
      // many rope nodes.
      out += index === 0 ? (item ?? 'null') : item === undefined ? ',null' : ',' + item;
      if (out.length > MAX_CANONICAL_LENGTH) throw tooLong();
    }
  } catch (error) {
    throw faultAt(error, index);
  }
  ancestors.pop();
  return out + ']';
}

/** One member of an object whose keys need escaping or NFC normalisation. */
interface Member {
  /** The NFC-normalised key: what is sorted and written. */
  readonly nfc: string;
  /** The key as found on the object: what is read and named in paths. */
  readonly key: string;
}

const byNfcKey = (a: Member, b: Member): number => (a.nfc < b.nfc ? -1 : a.nfc > b.nfc ? 1 : 0);

function encodeMembers(object: Record<string, unknown>, ancestors: object[]): string {
  const keys = Object.keys(object);
  if (keys.length === 0) return '{}';
  let plain = true;
  for (const key of keys) {
    if (!PLAIN_ASCII.test(key)) {
      plain = false;
      break;
    }
  }
  if (!plain) return encodeMembersSlow(object, keys, ancestors);
  // Plain ASCII keys are their own NFC form (so distinct) and need no escaping.
  sortKeys(keys);
  ancestors.push(object);
  let out = '{';
  let key = '';
  try {
    for (key of keys) {
      const member = encode(object[key], key, ancestors);
      if (member === undefined) continue;
      out += (out.length === 1 ? '"' : ',"') + key + '":' + member;
      if (out.length > MAX_CANONICAL_LENGTH) throw tooLong();
    }
  } catch (error) {
    throw faultAt(error, key);
  }
  ancestors.pop();
  return out + '}';
}

function encodeMembersSlow(object: Record<string, unknown>, keys: string[], ancestors: object[]): string {
  const members: Member[] = [];
  for (const key of keys) members.push({ nfc: normalizeKey(key), key });
  members.sort(byNfcKey);
  for (let index = 1; index < members.length; index++) {
    const previous = members[index - 1]!;
    const current = members[index]!;
    if (previous.nfc === current.nfc) {
      throw new Fault(
        `the keys ${showKey(previous.key)} and ${showKey(current.key)} are equal after NFC ` +
          'normalisation, so the object has no canonical form',
      );
    }
  }
  ancestors.push(object);
  let out = '{';
  let key = '';
  try {
    for (const member of members) {
      key = member.key;
      const text = encode(object[key], key, ancestors);
      if (text === undefined) continue;
      out += (out.length === 1 ? '' : ',') + JSON.stringify(member.nfc) + ':' + text;
      if (out.length > MAX_CANONICAL_LENGTH) throw tooLong();
    }
  } catch (error) {
    throw faultAt(error, key);
  }
  ancestors.pop();
  return out + '}';
}
