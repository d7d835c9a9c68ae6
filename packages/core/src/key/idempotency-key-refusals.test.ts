import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { idempotencyKey, MAX_ID_LENGTH } from './idempotency-key.js';
import { base, derivationError } from './key.test-support.js';

describe('idempotencyKey refusals (KeyDerivationError naming the tool)', () => {
  it.each([
    ['missing', { amount: 5 }, /the key argument "orderId" is missing/],
    ['undefined', { orderId: undefined, amount: 5 }, /the key argument "orderId" is undefined/],
  ])('refuses a %s key argument, naming it', (_case, args, reason) => {
    const error = derivationError({ ...base, arguments: args, keyArguments: ['orderId'] });
    expect(error.tool).toBe('refund');
    expect(error.argument).toBe('orderId');
    expect(error.message).toMatch(reason);
    expect(error.message).toContain('tool "refund"');
  });

  it('does not take an inherited property for a key argument', () => {
    const args = Object.create({ orderId: 'inherited' }) as Record<string, unknown>;
    // A non-plain object is refused before key arguments are looked at.
    expect(derivationError({ ...base, arguments: args, keyArguments: ['orderId'] }).message).toMatch(
      /plain object/,
    );
    expect(derivationError({ ...base, arguments: {}, keyArguments: ['toString'] }).argument).toBe('toString');
  });

  it("refuses key 'call' without a non-empty call id", () => {
    expect(derivationError({ ...base, arguments: {}, key: 'call' }).message).toMatch(
      /needs a non-empty tool call id/,
    );
    expect(derivationError({ ...base, arguments: {}, key: 'call', callId: '' }).message).toMatch(
      /tool call id, got ""/,
    );
  });

  it("refuses scope 'run' without a non-empty run id (fails closed instead of sharing a key across runs)", () => {
    const { runId: _unused, ...noRun } = base;
    expect(derivationError({ ...noRun, arguments: {} }).message).toMatch(
      /scope 'run' needs a non-empty run id/,
    );
    expect(derivationError({ ...base, runId: '', arguments: {} }).message).toMatch(/run id, got ""/);
    expect(derivationError({ ...noRun, scope: 'run', arguments: {} }).tool).toBe('refund');
  });

  it('refuses a key function that throws, keeping the cause', () => {
    const boom = new Error('no order id');
    const error = derivationError({
      ...base,
      arguments: {},
      key: () => {
        throw boom;
      },
    });
    expect(error.message).toMatch(/the key function threw/);
    expect(error.cause).toBe(boom);
  });

  it.each([
    ['an empty string', ''],
    ['undefined', undefined],
    ['a number', 42],
    ['null', null],
    ['an object', { id: 1 }],
  ])('refuses a key function returning %s', (_case, result) => {
    const key = (() => result) as unknown as (args: Record<string, unknown>) => string;
    expect(derivationError({ ...base, arguments: {}, key }).message).toMatch(
      /must return a non-empty string/,
    );
  });

  it.each([
    ['null', null],
    ['an array', [1]],
    ['a string', 'orderId=1'],
    ['a Map', new Map()],
    ['a class instance', new (class Args {})()],
    ['undefined', undefined],
  ])('refuses arguments that are %s', (_case, args) => {
    const error = derivationError({ ...base, arguments: args as unknown as Record<string, unknown> });
    expect(error.message).toMatch(/the arguments must be a plain object/);
    expect(error.tool).toBe('refund');
  });

  it('refuses a tenant or tool name no store accepts (nameProblem), naming the field', () => {
    const tenant = (value: unknown) => derivationError({ ...base, tenant: value as string, arguments: {} });
    const tool = (value: unknown) => derivationError({ ...base, tool: value as string, arguments: {} });
    for (const [value, reason] of [
      ['', /the tenant must not be empty/],
      [7, /the tenant must be a string, got number/],
      ['t'.repeat(257), /the tenant must be at most 256 characters, got 257/],
      ['a\u0000b', /the tenant must not contain NUL/],
      ['a\udc00', /the tenant must be well-formed Unicode/],
    ] as const) {
      const error = tenant(value);
      expect(error.message).toMatch(reason);
      expect(error.field).toBe('tenant');
      expect(error.tool).toBe('refund');
    }
    expect(idempotencyKey({ ...base, tenant: 't'.repeat(256), arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
    for (const [value, reason] of [
      ['', /the tool name must not be empty/],
      [undefined, /the tool name must be a string, got undefined/],
      ['x'.repeat(257), /the tool name must be at most 256 characters/],
      ['a\u0000b', /the tool name must not contain NUL/],
      ['\ud800x', /the tool name must be well-formed Unicode/],
    ] as const) {
      const error = tool(value);
      expect(error.message).toMatch(reason);
      expect(error.field).toBe('tool');
    }
    expect(tool(undefined).tool).toBe('undefined');
    // The name in the error is escaped and cut: a megabyte name does not make a megabyte message.
    const long = tool('y'.repeat(1_000_000));
    expect(long.message.length).toBeLessThan(400);
    expect(tool('a\u0000b').tool).toBe('"a\\u0000b"');
  });

  it('refuses a run id or call id that is too long or not well-formed (they are hashed, never stored)', () => {
    expect(idempotencyKey({ ...base, runId: 'r'.repeat(MAX_ID_LENGTH), arguments: {} })).toMatch(
      /^[0-9a-f]{64}$/,
    );
    const long = derivationError({ ...base, runId: 'r'.repeat(MAX_ID_LENGTH + 1), arguments: {} });
    expect(long.message).toMatch(/the run id must be at most 1024 characters, got 1025/);
    expect(long.field).toBe('runId');
    const lone = derivationError({ ...base, runId: 'run-\ud800', arguments: {} });
    expect(lone.message).toMatch(/the run id must be well-formed Unicode/);
    expect(lone.field).toBe('runId');
    const call = { ...base, arguments: {}, key: 'call' as const };
    expect(idempotencyKey({ ...call, callId: 'c'.repeat(MAX_ID_LENGTH) })).toMatch(/^[0-9a-f]{64}$/);
    expect(derivationError({ ...call, callId: 'c'.repeat(MAX_ID_LENGTH + 1) }).field).toBe('callId');
    expect(derivationError({ ...call, callId: '\udfffx' }).message).toMatch(
      /tool call id must be well-formed/,
    );
    // NUL is fine in a hashed id (it is escaped as \u0000); only stored names refuse it.
    expect(idempotencyKey({ ...base, runId: 'a\u0000b', arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
    // Unused ids are not looked at: scope 'tenant' ignores the run id, other keys the call id.
    expect(idempotencyKey({ ...base, scope: 'tenant', runId: '\ud800', arguments: {} })).toMatch(
      /^[0-9a-f]{64}$/,
    );
    expect(idempotencyKey({ ...base, callId: 'x'.repeat(5000), arguments: {} })).toMatch(/^[0-9a-f]{64}$/);
  });

  it('refuses unknown strategies and scopes, empty or malformed keyArguments, and keyArguments with another strategy', () => {
    expect(derivationError({ ...base, arguments: {}, key: 'args' as 'call' }).message).toMatch(
      /the key must be/,
    );
    expect(derivationError({ ...base, arguments: {}, scope: 'global' as 'run' }).message).toMatch(
      /the scope must be/,
    );
    expect(derivationError({ ...base, arguments: { a: 1 }, keyArguments: [] }).message).toMatch(
      /keyArguments is empty/,
    );
    expect(derivationError({ ...base, arguments: { a: 1 }, keyArguments: [''] }).message).toMatch(
      /non-empty names/,
    );
    expect(
      derivationError({ ...base, arguments: { a: 1 }, keyArguments: 'a' as unknown as string[] }).message,
    ).toMatch(/must be an array/);
    expect(
      derivationError({ ...base, arguments: { a: 1 }, keyArguments: ['a'], key: 'call', callId: 'c' })
        .message,
    ).toMatch(/only to the 'arguments' key strategy/);
  });

  it('turns a CanonicalizationError into a KeyDerivationError with it as cause and its path (relative to the arguments) in the message', () => {
    const error = derivationError({ ...base, arguments: { order: { amount: Number.NaN } } });
    expect(error.message).toContain('at "/order/amount"');
    expect(error.message).toContain('NaN is not a JSON number');
    expect(CanonicalizationError.isInstance(error.cause)).toBe(true);
    expect((error.cause as CanonicalizationError).path).toBe('/order/amount');

    const subset = derivationError({ ...base, arguments: { id: 10n, x: Number.NaN }, keyArguments: ['id'] });
    expect((subset.cause as CanonicalizationError).path).toBe('/id');
    expect(subset.message).toMatch(/BigInt/);

    const business = derivationError({ ...base, arguments: {}, key: () => 'refund:\ud800' });
    expect(business.message).toMatch(/the business key cannot be canonicalized: .*lone surrogate/);
    expect(CanonicalizationError.isInstance(business.cause)).toBe(true);

    expect(business.field).toBe('key');
  });

  it('turns an error thrown while reading an argument (a getter) into a KeyDerivationError with it as cause', () => {
    const boom = new Error('getter failed');
    const args = {
      get amount(): number {
        throw boom;
      },
    };
    const error = derivationError({ ...base, arguments: args });
    expect(error.message).toMatch(
      /the arguments cannot be canonicalized at "\/amount": reading the value threw Error: getter failed/,
    );
    expect(error.field).toBe('arguments');
    expect(CanonicalizationError.isInstance(error.cause)).toBe(true);
    expect((error.cause as CanonicalizationError).path).toBe('/amount');
    expect((error.cause as CanonicalizationError).cause).toBe(boom);
    // A key argument's own getter: the thrown error is the cause, the argument is named.
    const keyed = derivationError({ ...base, arguments: args, keyArguments: ['amount'] });
    expect(keyed.argument).toBe('amount');
    expect(keyed.cause).toBe(boom);
  });

  it('lets an argument outside keyArguments be anything (it is not encoded)', () => {
    expect(idempotencyKey({ ...base, arguments: { id: 1, blob: new Map() }, keyArguments: ['id'] })).toMatch(
      /^[0-9a-f]{64}$/,
    );
  });
});
