/**
 * C04 — a missing key argument merges unrelated calls (layer: key hashing).
 * See docs/field-cases.md (C04) and docs/key-spec.md ("Missing and
 * present values"). Checked at the key level: the guard turns the KeyDerivationError into a
 * failed call whose body does not run.
 */
import { describe, expect, it } from 'vitest';
import { KeyDerivationError } from '../../packages/core/src/errors/key-derivation-error.js';
import { idempotencyKey, type KeyInput } from '../../packages/core/src/key/idempotency-key.js';

const call = (args: Record<string, unknown>): KeyInput => ({
  tenant: 'acme',
  runId: 'run-1',
  tool: 'refund_order',
  arguments: args,
  keyArguments: ['orderId'],
});

function refusal(args: Record<string, unknown>): KeyDerivationError {
  try {
    idempotencyKey(call(args));
  } catch (error) {
    expect(KeyDerivationError.isInstance(error)).toBe(true);
    return error as KeyDerivationError;
  }
  throw new Error('expected a KeyDerivationError: a call without its key argument must not get a key');
}

describe('C04: a missing key argument merges unrelated calls', () => {
  it('refuses a call without orderId, naming the argument and the tool', () => {
    const error = refusal({ amount: 5, reason: 'damaged' });
    expect(error.code).toBe('KEY_DERIVATION_FAILED');
    expect(error.argument).toBe('orderId');
    expect(error.tool).toBe('refund_order');
    expect(error.message).toContain('"orderId" is missing');
  });

  it('refuses a call with orderId: undefined the same way', () => {
    const error = refusal({ orderId: undefined, amount: 5 });
    expect(error.argument).toBe('orderId');
    expect(error.message).toContain('"orderId" is undefined');
  });

  it('never gives two different calls without orderId one key (both are refused)', () => {
    expect(refusal({ amount: 5 }).argument).toBe('orderId');
    expect(refusal({ amount: 900, orderId: undefined }).argument).toBe('orderId');
  });

  it('treats null, "", [] and {} as present values, each with its own key', () => {
    const keys = new Map<string, string>([
      ['null', idempotencyKey(call({ orderId: null }))],
      ['""', idempotencyKey(call({ orderId: '' }))],
      ['[]', idempotencyKey(call({ orderId: [] }))],
      ['{}', idempotencyKey(call({ orderId: {} }))],
      ['"A-100"', idempotencyKey(call({ orderId: 'A-100' }))],
    ]);
    expect(new Set(keys.values()).size).toBe(keys.size);
    for (const key of keys.values()) expect(key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps one key for one present value whatever the other arguments are', () => {
    expect(idempotencyKey(call({ orderId: null, amount: 1 }))).toBe(
      idempotencyKey(call({ orderId: null, amount: 2 })),
    );
  });
});
