// Issue 14, item 1: whatever they are given, canonicalJson, argumentsFingerprint and
// idempotencyKey throw only typed errors, with what was thrown underneath as the cause.
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { canonicalJson, MAX_CANONICAL_LENGTH } from './canonical-json.js';
import { argumentsFingerprint, idempotencyKey, type KeyInput } from './idempotency-key.js';
import { canonicalFailure, revoked } from './key.test-support.js';

describe('hostile input, case by case', () => {
  const base = { tenant: 'acme', runId: 'run-1', tool: 'refund' } as const;

  function keyError(input: unknown): KeyDerivationError {
    try {
      idempotencyKey(input as KeyInput);
    } catch (error) {
      expect(error).toBeInstanceOf(KeyDerivationError);
      return error as KeyDerivationError;
    }
    throw new Error('expected a KeyDerivationError');
  }

  function canonicalError(value: unknown): CanonicalizationError {
    try {
      canonicalJson(value);
    } catch (error) {
      expect(error).toBeInstanceOf(CanonicalizationError);
      return error as CanonicalizationError;
    }
    throw new Error('expected a CanonicalizationError');
  }

  it('the reported cases of issue 14: a getPrototypeOf trap, a revoked Proxy, a getter outside the key, tool ""', () => {
    const trap = new Error('trap');
    const proxy = new Proxy(
      {},
      {
        getPrototypeOf: () => {
          throw trap;
        },
      },
    );
    const viaTrap = keyError({ ...base, arguments: proxy });
    expect(viaTrap.field).toBe('arguments');
    expect(viaTrap.cause).toBe(trap);

    const revokedArguments = keyError({ ...base, arguments: revoked({}) });
    expect(revokedArguments.field).toBe('arguments');
    expect(revokedArguments.cause).toBeInstanceOf(TypeError);
    expect(revokedArguments.message).toMatch(/reading the arguments threw TypeError/);

    const getter = new Error('getter');
    const args = Object.defineProperty({ id: 1 }, 'note', {
      enumerable: true,
      get: () => {
        throw getter;
      },
    });
    // key 'call' does not read the arguments; the fingerprint reads every one of them.
    expect(idempotencyKey({ ...base, arguments: args, key: 'call', callId: 'c1' })).toMatch(/^[0-9a-f]{64}$/);
    const fingerprint = canonicalFailure(() => argumentsFingerprint(args));
    expect(fingerprint.path).toBe('/note');
    expect(fingerprint.cause).toBe(getter);

    expect(keyError({ ...base, tool: '', arguments: {} }).field).toBe('tool');
  });

  it('a Proxy is read through its traps (as JSON.stringify reads it); a revoked one fails at its path', () => {
    const target = { b: [1, 2], a: 'x' };
    expect(canonicalJson(new Proxy(target, {}))).toBe('{"a":"x","b":[1,2]}');
    expect(canonicalJson(new Proxy([1, { c: true }], {}))).toBe('[1,{"c":true}]');
    const error = canonicalError({ ok: 1, list: [0, revoked([])] });
    expect(error.path).toBe('/list/1');
    expect(error.cause).toBeInstanceOf(TypeError);
    // An ownKeys trap that breaks the Proxy invariants: the engine's TypeError is the cause.
    const duplicate = new Proxy({}, { ownKeys: () => ['a', 'a'] });
    expect(canonicalError({ x: duplicate }).cause).toBeInstanceOf(TypeError);
  });

  it('a thrown value that is itself a hostile Proxy does not escape', () => {
    const thrown = revoked({});
    const value = Object.defineProperty({}, 'a', {
      enumerable: true,
      get: () => {
        throw thrown;
      },
    });
    const error = canonicalError(value);
    expect(error.cause).toBe(thrown);
    expect(error.message).toMatch(/reading the value threw a value that cannot be described/);
    const keyed = keyError({ ...base, arguments: value });
    expect(CanonicalizationError.isInstance(keyed.cause)).toBe(true);
    expect((keyed.cause as CanonicalizationError).cause).toBe(thrown);
  });

  it('toJSON: one that throws is the cause; one that returns itself is encoded without it; one that recurses hits the depth limit', () => {
    const boom = new Error('boom');
    expect(
      canonicalError({
        toJSON: () => {
          throw boom;
        },
      }).cause,
    ).toBe(boom);
    expect(
      canonicalJson({
        a: 1,
        toJSON() {
          return this;
        },
      }),
    ).toBe('{"a":1}');
    const recursing = canonicalError({
      toJSON() {
        return { again: this };
      },
    });
    expect(recursing.message).toMatch(/nested deeper than 1000/);
  });

  it('sparse arrays: holes are null; an array of length 2^32 - 1 is refused quickly at the root, not after the heap is gone', () => {
    const holey = [1, 2, 3];
    delete holey[1];
    expect(canonicalJson(holey)).toBe('[1,null,3]');
    const huge = Object.assign([], { length: 2 ** 32 - 1 });
    const started = performance.now();
    const error = canonicalError(huge);
    expect(error.path).toBe('');
    expect(error.message).toMatch(/longer than 16777216 UTF-16 code units/);
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('one object reached twice at every level (text doubling with depth) is refused at the length limit', {
    timeout: 120_000,
  }, () => {
    // CPU-bound: 16 Mi code units of canonical text are built before the limit is hit (seconds
    // on a loaded machine, past the 30 s default with two full runs at once).
    let value: unknown = 'abcdefgh';
    for (let level = 0; level < 64; level++) value = [value, value];
    expect(canonicalError(value).message).toMatch(/longer than 16777216/);
  });

  it('the length limit is exact: a text of MAX_CANONICAL_LENGTH code units is accepted, one more is refused', () => {
    const fits = 'a'.repeat(MAX_CANONICAL_LENGTH - 2);
    expect(canonicalJson(fits).length).toBe(MAX_CANONICAL_LENGTH);
    expect(canonicalError(`${fits}b`).path).toBe('');
    expect(canonicalJson([fits.slice(2)]).length).toBe(MAX_CANONICAL_LENGTH);
    expect(canonicalError([fits.slice(1)]).message).toMatch(/longer than/);
    expect(canonicalError({ k: fits }).path).toBe('');
  });

  it('a getter that canonicalizes its own object (unbounded recursion, a stack overflow) is a CanonicalizationError', () => {
    const value: Record<string, unknown> = {};
    Object.defineProperty(value, 'a', { enumerable: true, get: () => canonicalJson(value) });
    const error = canonicalError(value);
    expect(error.path).toBe('/a');
    expect(keyError({ ...base, arguments: value }).field).toBe('arguments');
  });

  it('frozen objects, null-prototype objects, symbols and Dates are encoded; Map and class instances refused', () => {
    expect(canonicalJson(Object.freeze({ b: Object.freeze([1]), a: null }))).toBe('{"a":null,"b":[1]}');
    const bare = Object.assign(Object.create(null) as object, { z: 1, y: 2 });
    expect(canonicalJson(bare)).toBe('{"y":2,"z":1}');
    expect(canonicalJson({ [Symbol('hidden')]: 1, s: Symbol('omitted'), list: [Symbol('null')] })).toBe(
      '{"list":[null]}',
    );
    expect(canonicalJson({ at: new Date(0) })).toBe('{"at":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalError({ m: new Map() }).path).toBe('/m');
    expect(canonicalError({ p: new (class Point {})() }).message).toMatch(/an instance of Point/);
    expect(canonicalJson({ n: -0 })).toBe('{"n":0}');
  });

  it('a hostile input object: a getter or Proxy on the input itself, null, a string', () => {
    const boom = new Error('tool getter');
    const input = Object.defineProperty({ ...base, arguments: {} }, 'tool', {
      get: () => {
        throw boom;
      },
    });
    const error = keyError(input);
    expect(error.field).toBe('tool');
    expect(error.cause).toBe(boom);
    expect(keyError(null).field).toBe('input');
    expect(keyError('input').field).toBe('input');
    expect(keyError(revoked({})).cause).toBeInstanceOf(TypeError);
  });

  it('keyArguments: a revoked Proxy, a hijacked iterator, a throwing index', () => {
    expect(keyError({ ...base, arguments: { a: 1 }, keyArguments: revoked([]) }).field).toBe('keyArguments');
    // Read by index: an own Symbol.iterator is never called.
    const hijacked = Object.assign(['a'], {
      [Symbol.iterator]: () => {
        throw new Error('iterator');
      },
    });
    expect(idempotencyKey({ ...base, arguments: { a: 1, b: 2 }, keyArguments: hijacked })).toBe(
      idempotencyKey({ ...base, arguments: { a: 1 } }),
    );
    const index = new Error('index');
    const throwingIndex = new Proxy(['a'], {
      get: (target, property) => {
        if (property === '0') throw index;
        return Reflect.get(target, property);
      },
    });
    expect(keyError({ ...base, arguments: { a: 1 }, keyArguments: throwingIndex }).cause).toBe(index);
  });
});
