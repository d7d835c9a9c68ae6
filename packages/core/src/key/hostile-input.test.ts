// Issue 14, item 1: whatever they are given, canonicalJson, argumentsFingerprint and
// idempotencyKey throw only typed errors, with what was thrown underneath as the cause.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { canonicalJson, MAX_CANONICAL_LENGTH, MAX_NESTING_DEPTH } from './canonical-json.js';
import { argumentsFingerprint, idempotencyKey, type KeyInput } from './idempotency-key.js';

/** Every value a hostile getter, trap, toJSON or key function threw during the current call. */
const thrownLog: unknown[] = [];

function throwing(value: unknown): never {
  thrownLog.push(value);
  throw value;
}

const TRAPS = [
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

function revoked(target: object): object {
  const { proxy, revoke } = Proxy.revocable(target, {});
  revoke();
  return proxy;
}

/** What a hostile thrower throws: errors, primitives, and values that are hostile themselves. */
const thrownValue: fc.Arbitrary<() => unknown> = fc.oneof(
  fc.string().map((message) => () => new Error(message)),
  fc.constant(() => new RangeError('range')),
  fc.string({ unit: 'binary' }).map((text) => () => text),
  fc.integer().map((n) => () => n),
  fc.constant(() => ({ not: 'an error' })),
  fc.constant(() => Symbol('thrown')),
  fc.constant(() => revoked({})),
  fc.constant(
    () =>
      new Proxy(new Error('proxied'), {
        get: () => {
          throw new Error('reading the thrown value throws too');
        },
        getPrototypeOf: () => {
          throw new Error('so does its prototype');
        },
      }),
  ),
);

/** A Proxy on `target` whose trap `trap` (or every trap) throws. */
function trapProxy(target: object, traps: readonly string[], thrown: () => unknown): object {
  const handler: ProxyHandler<object> = {};
  for (const trap of traps) {
    (handler as Record<string, unknown>)[trap] = () => throwing(thrown());
  }
  return new Proxy(target, handler);
}

/**
 * The arbitraries below make builders (`() => value`), not values: fast-check inspects what it
 * generates (to clone or print it), and a hostile value would throw inside fast-check itself.
 * The property builds the value, then hands it to the function under test.
 */
type Build = () => unknown;
const built =
  (value: unknown): Build =>
  () =>
    value;

const special = fc.constantFrom<Build>(
  built(Number.NaN),
  built(-0),
  built(Number.POSITIVE_INFINITY),
  built(Number.NEGATIVE_INFINITY),
  built(10n),
  () => Object(10n),
  built(Symbol('s')),
  built('\ud800'),
  built('x\udc00y'),
  built('\u{1f602}'),
  built('e\u0301'),
  built(undefined),
  built(null),
  built(() => 1),
  () => new Date(0),
  () => new Date(Number.NaN),
  () => new Map([['a', 1]]),
  () => new Set([1]),
  () => new Uint8Array([1, 2]),
  () => /x/,
  () => new Error('e'),
  () =>
    new (class Point {
      x = 1;
    })(),
  () => Object(1),
  () => Object('s'),
  () => Object(true),
);

const leaf = fc.oneof(
  { weight: 3, arbitrary: special },
  {
    weight: 3,
    arbitrary: fc
      .anything({
        maxDepth: 2,
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
      })
      .map((value) => built(value)),
  },
);

const object = (build: Build): object | undefined => {
  const value = build();
  return value !== null && typeof value === 'object' ? value : undefined;
};

const hostileBuild = fc.letrec<{ value: Build }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 4 }).map((items) => () => items.map((item) => item())),
    fc
      .dictionary(fc.string({ unit: 'binary', maxLength: 4 }), tie('value'), { maxKeys: 4 })
      .map((members) => () => {
        const out: Record<string, unknown> = {};
        for (const [key, member] of Object.entries(members)) out[key] = member();
        return out;
      }),
    // A Proxy whose traps throw: one trap, or all of them.
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom(...TRAPS).map((trap) => [trap]),
          fc.constant([...TRAPS]),
        ),
        fc.constantFrom<() => object>(
          () => ({ a: 1 }),
          () => [1, 2],
          () => Object.create(null) as object,
        ),
        thrownValue,
      )
      .map(
        ([traps, target, thrown]) =>
          () =>
            trapProxy(target(), traps, thrown),
      ),
    fc.constantFrom<Build>(
      () => revoked({}),
      () => revoked([]),
    ),
    // A transparent Proxy: read through its traps, like JSON.stringify reads it.
    tie('value').map((build) => () => {
      const target = object(build);
      return target === undefined ? build() : new Proxy(target, {});
    }),
    // An enumerable getter that throws, beside an ordinary member.
    fc.tuple(tie('value'), thrownValue).map(
      ([build, thrown]) =>
        () =>
          Object.defineProperty({ ok: build() }, 'bad', { enumerable: true, get: () => throwing(thrown()) }),
    ),
    thrownValue.map((thrown) => () => ({ toJSON: () => throwing(thrown()) })),
    fc.constant<Build>(() => ({
      toJSON() {
        return this;
      },
      a: 1,
    })),
    tie('value').map((build) => () => ({ toJSON: () => build() })),
    // A toJSON that makes a new object around itself on every call: bounded by the depth limit.
    fc.constant<Build>(() => ({
      toJSON() {
        return { again: this };
      },
    })),
    tie('value').map((build) => () => {
      const value = build();
      return value !== null && typeof value === 'object' ? Object.freeze(value) : value;
    }),
    fc.dictionary(fc.string({ maxLength: 3 }), tie('value'), { maxKeys: 3 }).map((members) => () => {
      const out = Object.create(null) as Record<string, unknown>;
      for (const [key, member] of Object.entries(members)) out[key] = member();
      return out;
    }),
    tie('value').map((build) => () => ({ [Symbol('key')]: build(), visible: 1 })),
    fc.constantFrom(1, 100, 5000).map((length) => () => Object.assign([], { length })),
    fc.constantFrom(MAX_NESTING_DEPTH - 1, MAX_NESTING_DEPTH + 1).map((depth) => () => {
      let value: unknown = 'leaf';
      for (let index = 0; index < depth; index++) value = index % 2 === 0 ? [value] : { d: value };
      return value;
    }),
    // Keys with lone surrogates, keys equal after NFC.
    fc.constantFrom<Build>(
      () => ({ '\ud800': 1 }),
      () => ({ '\u00e9': 1, 'e\u0301': 2 }),
      () => ({ 'a\udfffb': [] }),
    ),
  ),
})).value;

/**
 * `error` and its causes, outermost first, following `cause` only through toolfence errors (what
 * was thrown underneath may be a hostile Proxy: it is collected, never read).
 */
function causeChain(error: unknown): unknown[] {
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
function isToolfenceError(value: unknown): value is ToolfenceError {
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
function checkFailure(error: unknown, allowed: ReadonlyArray<{ isInstance(error: unknown): boolean }>): void {
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
function buildAll(builds: readonly Build[]): unknown[] | undefined {
  try {
    return builds.map((build) => build());
  } catch {
    return undefined;
  }
}

function attempt(run: () => string, allowed: ReadonlyArray<{ isInstance(error: unknown): boolean }>): void {
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

const secretBuild = fc.oneof(
  fc.constant<Build>(built(undefined)),
  fc.string({ unit: 'binary', maxLength: 40 }).map(built),
  fc.uint8Array({ maxLength: 40 }).map((bytes) => () => new Uint8Array(bytes)),
  fc.constantFrom<Build>(
    built('s'.repeat(32)),
    () => Buffer.alloc(32, 7),
    built(['s'.repeat(32), 't'.repeat(32)]),
    built(null),
    built(32),
    () => revoked({}),
    () => Object.defineProperty(new Uint8Array(4), 'byteLength', { value: 64 }),
  ),
  thrownValue.map((thrown) => () => trapProxy(new Uint8Array(32), [...TRAPS], thrown)),
);

const nameBuild = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom('acme', 'refund', 'run-1', 'call_1').map(built) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }).map(built) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('', 'a\u0000b', '\ud800', 'x'.repeat(257), 'y'.repeat(1025)).map(built),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Build>(
      built(undefined),
      built(null),
      built(7),
      built(Symbol('n')),
      () => ({}),
      () => ['a'],
    ),
  },
);

const strategyBuild = fc.oneof(
  fc.constantFrom<unknown>(undefined, 'arguments', 'call', 'args', null, 1).map(built),
  thrownValue.map((thrown) => built(() => throwing(thrown()))),
  hostileBuild.map((build) => built(() => build())),
  fc.constant(built(() => 'refund:A-1')),
);

const keyArgumentsBuild = fc.oneof(
  fc.constant(built(undefined)),
  fc
    .array(fc.constantFrom('a', 'ok', 'bad', 'orderId', '', '__proto__'), { maxLength: 3 })
    .map((names) => () => [...names]),
  fc.constantFrom<Build>(
    built('a'),
    () => [1],
    () => [null],
    () => revoked([]),
  ),
  thrownValue.map((thrown) => () => trapProxy(['a'], [...TRAPS], thrown)),
  thrownValue.map((thrown) => () => Object.assign(['a'], { [Symbol.iterator]: () => throwing(thrown()) })),
);

const FIELDS = ['tenant', 'tool', 'runId', 'callId', 'arguments', 'keyArguments', 'key', 'scope', 'secret'];

const keyInputBuild = fc
  .record({
    tenant: nameBuild,
    tool: nameBuild,
    runId: nameBuild,
    callId: nameBuild,
    arguments: hostileBuild,
    keyArguments: keyArgumentsBuild,
    key: strategyBuild,
    scope: fc.constantFrom<unknown>(undefined, 'run', 'tenant', 'global').map(built),
    secret: secretBuild,
  })
  .map((builds) => () => {
    const record: Record<string, unknown> = {};
    for (const [field, build] of Object.entries(builds)) record[field] = build();
    return record;
  })
  .chain((build) =>
    fc.oneof(
      { weight: 8, arbitrary: fc.constant<Build>(build) },
      // The input itself hostile: a getter on one member, a Proxy, not an object at all.
      {
        weight: 1,
        arbitrary: fc.tuple(fc.constantFrom(...FIELDS), thrownValue).map(
          ([field, thrown]) =>
            () =>
              Object.defineProperty(build() as object, field, {
                enumerable: true,
                get: () => throwing(thrown()),
              }),
        ),
      },
      {
        weight: 1,
        arbitrary: thrownValue.map((thrown) => () => trapProxy(build() as object, [...TRAPS], thrown)),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Build>(built(null), built(undefined), built('input'), () => revoked({})),
      },
    ),
  );

describe('hostile input (fast-check)', () => {
  it('canonicalJson throws nothing but CanonicalizationError, with the thrown value as cause', () => {
    fc.assert(
      fc.property(hostileBuild, (build) => {
        const [value] = buildAll([build]) ?? [];
        attempt(() => canonicalJson(value), [CanonicalizationError]);
      }),
      { numRuns: 1000 },
    );
  });

  it('argumentsFingerprint throws nothing but CanonicalizationError and PolicyError (secret)', () => {
    fc.assert(
      fc.property(hostileBuild, secretBuild, fc.boolean(), (valueBuild, secretBuild, withOptions) => {
        const [value, secret] = buildAll([valueBuild, secretBuild]) ?? [];
        attempt(
          () => argumentsFingerprint(value, withOptions ? { secret: secret as string } : undefined),
          [CanonicalizationError, PolicyError],
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('idempotencyKey throws nothing but KeyDerivationError, whatever the input', () => {
    fc.assert(
      fc.property(keyInputBuild, (inputBuild) => {
        const [input] = buildAll([inputBuild]) ?? [];
        attempt(() => {
          const key = idempotencyKey(input as KeyInput);
          expect(key).toMatch(/^[0-9a-f]{64}$/);
          return key;
        }, [KeyDerivationError]);
      }),
      { numRuns: 2000 },
    );
  });
});

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

  it('one object reached twice at every level (text doubling with depth) is refused at the length limit', () => {
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

function canonicalFailure(run: () => unknown): CanonicalizationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CanonicalizationError);
    return error as CanonicalizationError;
  }
  throw new Error('expected a CanonicalizationError');
}
