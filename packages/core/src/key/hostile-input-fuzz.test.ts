// Issue 14, item 1: whatever they are given, canonicalJson, argumentsFingerprint and
// idempotencyKey throw only typed errors, with what was thrown underneath as the cause.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { canonicalJson, MAX_NESTING_DEPTH } from './canonical-json.js';
import { argumentsFingerprint, idempotencyKey, type KeyInput } from './idempotency-key.js';
import { attempt, type Build, buildAll, revoked, TRAPS, throwing, trapProxy } from './key.test-support.js';

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

/**
 * The arbitraries below make builders (`() => value`), not values: fast-check inspects what it
 * generates (to clone or print it), and a hostile value would throw inside fast-check itself.
 * The property builds the value, then hands it to the function under test.
 */

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
