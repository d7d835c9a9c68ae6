// Helpers shared by the key folder's test files. Not shipped, not built: the package's `files`
// and tsconfig.json exclude *.test-support.ts as they exclude *.test.ts.

import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { canonicalJson } from './canonical-json.js';
import { idempotencyKey, type KeyInput } from './idempotency-key.js';

export type Build = () => unknown;

/** Every value a hostile getter, trap, toJSON or key function threw during the current call. */
export const thrownLog: unknown[] = [];

export function throwing(value: unknown): never {
  thrownLog.push(value);
  throw value;
}

export const TRAPS = [
  'getPrototypeOf',
  'setPrototypeOf',
  'isExtensible',
  'preventExtensions',
  'getOwnPropertyDescriptor',
  'defineProperty',
  'has',
  'get',
  'set',
  'deleteProperty',
  'ownKeys',
  'apply',
  'construct',
] as const;

export function revoked(target: object): object {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** A Proxy on `target` whose trap `trap` (or every trap) throws. */
export function trapProxy(target: object, traps: readonly string[], thrown: () => unknown): object {
  const handler: ProxyHandler<object> = {};
  for (const trap of traps) {
    (handler as Record<string, unknown>)[trap] = () => throwing(thrown());
  }
  return new Proxy(target, handler);
}

/**
 * `error` and its causes, outermost first, following `cause` only through toolfence errors (what
 * was thrown underneath may be a hostile Proxy: it is collected, never read).
 */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [error];
  let current: unknown = error;
  while (chain.length < 10 && isToolfenceError(current)) {
    current = current.cause;
    if (current === undefined) break;
    chain.push(current);
  }
  return chain;
}

/** `instanceof` without reading a hostile value (only our own errors are real instances). */
export function isToolfenceError(value: unknown): value is ToolfenceError {
  try {
    return value instanceof ToolfenceError;
  } catch {
    return false;
  }
}

/**
 * The checks every failure must pass: the error is one of `allowed`, a real toolfence error;
 * when a hostile thrower threw, the thrown value is in the cause chain (a thrown `undefined`
 * cannot be a cause); every toolfence error in the chain that says something threw has a cause.
 */
export function checkFailure(
  error: unknown,
  allowed: ReadonlyArray<{ isInstance(error: unknown): boolean }>,
): void {
  if (!isToolfenceError(error)) throw new Error(`not a ToolfenceError: ${String(error)}`);
  expect(allowed.some((kind) => kind.isInstance(error))).toBe(true);
  const chain = causeChain(error);
  const first = thrownLog[0];
  if (thrownLog.length > 0 && first !== undefined && !chain.some((link) => Object.is(link, first))) {
    throw new Error(`the thrown value is not in the cause chain of: ${error.message}`);
  }
  for (const link of chain) {
    if (isToolfenceError(link) && /\bthrew\b(?! undefined)|could not be read/.test(link.message)) {
      if (link.cause === undefined) throw new Error(`no cause: ${link.message}`);
    }
  }
}

/** Build the hostile values (a build that throws, such as freezing a revoked Proxy, is skipped). */
export function buildAll(builds: readonly Build[]): unknown[] | undefined {
  try {
    return builds.map((build) => build());
  } catch {
    return undefined;
  }
}

export function attempt(
  run: () => string,
  allowed: ReadonlyArray<{ isInstance(error: unknown): boolean }>,
): void {
  thrownLog.length = 0;
  let result: string;
  try {
    result = run();
  } catch (error) {
    checkFailure(error, allowed);
    return;
  }
  // Every hostile throw aborts: a result means nothing threw.
  expect(thrownLog.length).toBe(0);
  expect(typeof result).toBe('string');
}

export function canonicalFailure(run: () => unknown): CanonicalizationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizationError);
    return error as CanonicalizationError;
  }
  throw new Error('expected a CanonicalizationError');
}

export const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
export const base = { tenant: 'acme', runId: 'run-1', tool: 'refund' } as const;

export function derivationError(input: KeyInput): KeyDerivationError {
  try {
    idempotencyKey(input);
  } catch (error) {
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    return error as KeyDerivationError;
  }
  throw new Error('expected a KeyDerivationError, nothing was thrown');
}

/** The envelope written as an object, to be canonicalized by `canonicalJson` as a whole. */
export function envelope(input: KeyInput, args: unknown): unknown {
  return {
    v: 1,
    tenant: input.tenant,
    scope: input.scope === 'tenant' ? null : input.runId,
    tool: input.tool,
    args,
  };
}

export const rfc8785 = new URL('../../../../test/vectors/rfc8785/', import.meta.url);

/** Run `fn` and return the CanonicalizationError it throws (failing the test otherwise). */
export function refusal(fn: () => unknown): CanonicalizationError {
  try {
    fn();
  } catch (error) {
    expect(CanonicalizationError.isInstance(error)).toBe(true);
    return error as CanonicalizationError;
  }
  throw new Error('expected a CanonicalizationError, nothing was thrown');
}

export function refusedAt(value: unknown, path: string, reason: RegExp): CanonicalizationError {
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
export function rfcEscape(text: string): string {
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
export function mapStrings(value: unknown, map: (text: string) => string): unknown {
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
export function shuffleKeys(value: unknown, order: () => number): unknown {
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

export const nfc = (text: string): string => text.normalize('NFC');
export const nfd = (text: string): string => text.normalize('NFD');
/** Letters with composed and decomposed forms, plus plain text, for NFC properties. */
export const accented = fc.string({
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
export const unicodeJson = fc.jsonValue({ stringUnit: 'binary', maxDepth: 4 });

export function hasLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return /[\ud800-\udfff]/u.test(value);
  if (Array.isArray(value)) return value.some(hasLoneSurrogate);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).some(([key, member]) => hasLoneSurrogate(key) || hasLoneSurrogate(member));
  }
  return false;
}
