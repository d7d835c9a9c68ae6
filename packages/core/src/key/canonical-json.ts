import { CanonicalizationError } from '../errors/canonicalization-error.js';

/**
 * The deepest nesting {@link canonicalJson} accepts: at most this many arrays and objects may
 * enclose one another (the root container counts as 1). A deeper value is refused with a
 * `CanonicalizationError` whose path points at the first container beyond the bound. The bound
 * keeps the encoder's recursion far from the JavaScript stack limit, whatever the input.
 */
export const MAX_NESTING_DEPTH = 1000;

/**
 * The longest canonical text {@link canonicalJson} writes, in UTF-16 code units (16 Mi, as
 * `MAX_OUTCOME_LENGTH`): a longer one is refused with a `CanonicalizationError` at the root
 * (path `""`). The bound keeps time and memory in proportion to the input: without it a sparse
 * array such as `Object.assign([], { length: 2 ** 32 - 1 })`, or one object reached twice at
 * every level of a deep value, makes text far larger than the value itself (the first exhausted
 * the heap of a Node.js process after about a minute).
 */
export const MAX_CANONICAL_LENGTH = 16_777_216;

/** Strings that need neither escaping (RFC 8785 §3.2.2.2) nor NFC normalisation. */
const PLAIN_ASCII = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;
/** Any code unit above ASCII. NFC of ASCII is the string itself (UAX #15): `normalize` is skipped. */
const NON_ASCII = /[\u0080-\uffff]/;
/**
 * A lone (unpaired) surrogate. In a `u` regular expression a surrogate pair is one code point
 * (not in the surrogate range), so only unpaired surrogate code units match.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

type Segment = string | number;

/**
 * Every {@link Fault} made here. Recognising one by membership rather than `instanceof` reads
 * nothing of the thrown value, so a thrown Proxy (even a revoked one) cannot throw again.
 */
const faults = new WeakSet<object>();

/**
 * A refusal on its way up to {@link canonicalJson}. Each enclosing container adds its member's
 * reference token while the fault unwinds, so no path is kept while encoding succeeds.
 */
class Fault {
  /** Reference tokens from the offending value up to the root (reversed at the end). */
  readonly segments: Segment[] = [];
  constructor(
    readonly reason: string,
    readonly cause?: unknown,
    /** For a cycle: how many containers enclose the repeated value's first occurrence. */
    readonly ancestorDepth?: number,
    /** A refusal of the whole text (too long): its path is the root, whatever container saw it. */
    readonly whole = false,
  ) {
    faults.add(this);
  }
}

function isFault(error: unknown): error is Fault {
  return typeof error === 'object' && error !== null && faults.has(error);
}

/**
 * The fault for `error` thrown while the value at `segment` was read or encoded: a fault already
 * (from deeper down) gets the segment; anything else (a getter, a Proxy trap, a stack overflow)
 * becomes a fault with the error as its cause.
 */
function faultAt(error: unknown, segment: Segment | undefined): Fault {
  const fault = isFault(error) ? error : new Fault(`reading the value threw ${describeThrown(error)}`, error);
  if (segment !== undefined && !fault.whole) fault.segments.push(segment);
  return fault;
}

/** What was thrown, for a message; never throws itself (the thrown value may be a hostile Proxy). */
export function describeThrown(error: unknown): string {
  try {
    if (error instanceof Error) {
      const message = String(error.message);
      return `${error.name}: ${message.length > 200 ? `${message.slice(0, 200)}...` : message}`;
    }
    if (typeof error === 'string')
      return JSON.stringify(error.length > 200 ? `${error.slice(0, 200)}...` : error);
    if (typeof error === 'object' && error !== null) return 'a non-Error object';
    if (typeof error === 'symbol') return 'a symbol';
    return String(error);
  } catch {
    return 'a value that cannot be described';
  }
}

function tooLong(): Fault {
  return new Fault(
    `the canonical text is longer than ${MAX_CANONICAL_LENGTH} UTF-16 code units`,
    undefined,
    undefined,
    true,
  );
}

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

function encodeNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new Fault(`${String(value)} is not a JSON number (RFC 8785 section 3.2.2.3)`);
  }
  // Number::toString (ECMA-262 §6.1.6.1.20) is RFC 8785's number format; it writes -0 as "0".
  return String(value);
}

function bigIntFault(): Fault {
  return new Fault('a BigInt has no exact JSON form; send large integers as strings');
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

/**
 * Sort strings by UTF-16 code units, the order of RFC 8785 section 3.2.3 (JavaScript's `<` on
 * strings and the default `sort` both compare code units). Insertion sort for the few keys of a
 * typical argument object: several times faster there than `Array.prototype.sort`.
 */
function sortKeys(keys: string[]): void {
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

/** The NFC form of a key, refusing lone surrogates. */
function normalizeKey(key: string): string {
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
function quote(value: string): string {
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

/**
 * An object that is not plain: a boxed primitive is unwrapped as `JSON.stringify` does
 * (ECMA-262 SerializeJSONProperty step 4); anything else is refused.
 */
function encodeNonPlain(value: object): string {
  if (hasSlot(Number.prototype.valueOf, value)) return encodeNumber(Number(value));
  if (hasSlot(String.prototype.valueOf, value)) return quote(String(value));
  if (hasSlot(Boolean.prototype.valueOf, value)) {
    return (Boolean.prototype.valueOf.call(value) as boolean) ? 'true' : 'false';
  }
  if (hasSlot(BigInt.prototype.valueOf, value)) throw bigIntFault();
  throw new Fault(
    `${describeInstance(value)} is not plain JSON data and has no toJSON method ` +
      '(JSON.stringify would not keep its content); convert it to a plain object, array or primitive',
  );
}

/** True when `value` has the internal slot `valueOf` reads (it throws a TypeError otherwise). */
function hasSlot(unbox: (this: unknown) => unknown, value: object): boolean {
  try {
    unbox.call(value);
    return true;
  } catch {
    return false;
  }
}

/** What kind of object `value` is, for a message. Reads its prototype, so it must not throw. */
function describeInstance(value: object): string {
  try {
    if (ArrayBuffer.isView(value)) {
      const viewName: unknown = value.constructor?.name;
      return `a ${typeof viewName === 'string' && viewName !== '' ? viewName : 'typed array'}`;
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    const ctor =
      typeof prototype === 'object' && prototype !== null
        ? (prototype as { constructor?: unknown }).constructor
        : undefined;
    const name: unknown = typeof ctor === 'function' ? ctor.name : undefined;
    return typeof name === 'string' && name !== ''
      ? `an instance of ${name}`
      : 'an object with a non-plain prototype';
  } catch {
    return 'an object with a non-plain prototype';
  }
}

/** A key for a message: JSON-quoted, every code unit outside printable ASCII as `\uXXXX`. */
function showKey(key: string): string {
  return JSON.stringify(key).replace(/[^\x20-\x7e]/g, (unit) => '\\u' + hex(unit));
}

function hex(unit: string): string {
  return unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
}

/** An RFC 6901 JSON pointer from unescaped reference tokens (`~` → `~0`, `/` → `~1`). */
function pointer(segments: readonly Segment[]): string {
  let out = '';
  for (const segment of segments) {
    out +=
      '/' +
      (typeof segment === 'number' ? String(segment) : segment.replace(/~/g, '~0').replace(/\//g, '~1'));
  }
  return out;
}
