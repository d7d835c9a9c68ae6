import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { canonicalJson } from './canonical-json.js';
import { canonicalEnvelope, idempotencyKey, type KeyInput } from './idempotency-key.js';
import { base, envelope, sha256 } from './key.test-support.js';

describe('properties', () => {
  const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 });
  // Keys NFC-normalised (duplicates merged) so that no generated object is refused.
  const args = fc
    .dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 })
    .map((value) =>
      Object.fromEntries(Object.entries(value).map(([key, member]) => [key.normalize('NFC'), member])),
    );

  it('the envelope equals canonicalJson of the envelope object, for every strategy and scope', () => {
    fc.assert(
      fc.property(
        text,
        text,
        text,
        text,
        args,
        fc.constantFrom('arguments', 'call', 'business'),
        fc.constantFrom('run', 'tenant'),
        (tenant, runId, tool, id, argumentsValue, strategy, scope) => {
          const normal = JSON.parse(JSON.stringify(argumentsValue)) as Record<string, unknown>;
          const input: KeyInput =
            strategy === 'arguments'
              ? { tenant, runId, tool, arguments: normal, scope }
              : strategy === 'call'
                ? { tenant, runId, tool, arguments: normal, scope, key: 'call', callId: id }
                : { tenant, runId, tool, arguments: normal, scope, key: () => id };
          const tagged =
            strategy === 'arguments'
              ? { arguments: normal }
              : strategy === 'call'
                ? { call: id }
                : { business: id };
          let expected: string;
          try {
            expected = canonicalJson(envelope(input, tagged));
          } catch (error) {
            // e.g. two generated keys equal after NFC: both ways must refuse.
            expect(CanonicalizationError.isInstance(error)).toBe(true);
            expect(() => canonicalEnvelope(input)).toThrow(KeyDerivationError);
            return;
          }
          expect(canonicalEnvelope(input)).toBe(expected);
          expect(idempotencyKey(input)).toBe(sha256(expected));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('argument order never changes the key', () => {
    fc.assert(
      fc.property(args, (value) => {
        const reversed = Object.fromEntries(Object.entries(value).reverse());
        expect(idempotencyKey({ ...base, arguments: reversed })).toBe(
          idempotencyKey({ ...base, arguments: value }),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('different canonical arguments give different keys', () => {
    fc.assert(
      fc.property(args, args, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(idempotencyKey({ ...base, arguments: a })).not.toBe(idempotencyKey({ ...base, arguments: b }));
      }),
      { numRuns: 200 },
    );
  });
});
