// Assertions of the conformance suite: node:assert underneath, so the cases run under any test
// runner (vitest, node:test, a plain script) and vitest is never loaded by them.
import { AssertionError, deepStrictEqual, strictEqual } from 'node:assert/strict';

/** `actual === expected`, with a label naming what was compared. */
export function equal(actual: unknown, expected: unknown, label: string): void {
  strictEqual(actual, expected, `${label}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Deep strict equality. */
export function same(actual: unknown, expected: unknown, label: string): void {
  deepStrictEqual(actual, expected, `${label}: expected ${show(expected)}, got ${show(actual)}`);
}

/** Every field of `expected` is deeply equal in `actual` (other fields are not looked at). */
export function fields(actual: unknown, expected: Record<string, unknown>, label: string): void {
  if (actual === null || typeof actual !== 'object') {
    fail(`${label}: expected an object with ${show(expected)}, got ${show(actual)}`);
  }
  const record = actual as Record<string, unknown>;
  for (const [name, value] of Object.entries(expected)) {
    const got = record[name];
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      fields(got, value as Record<string, unknown>, `${label}.${name}`);
    } else {
      deepStrictEqual(
        got,
        value,
        `${label}: ${name} should be ${show(value)}, got ${show(got)} (in ${show(actual)})`,
      );
    }
  }
}

export function ok(condition: unknown, label: string): asserts condition {
  if (!condition) fail(label);
}

export function fail(message: string): never {
  throw new AssertionError({ message });
}

/** Rejects with `recognise(error)` true, or fails naming what came back instead. */
export async function rejects(
  work: () => Promise<unknown>,
  recognise: (error: unknown) => boolean,
  label: string,
): Promise<unknown> {
  let settled: { value: unknown } | undefined;
  try {
    settled = { value: await work() };
  } catch (error) {
    if (!recognise(error)) fail(`${label}: rejected with the wrong error: ${describeError(error)}`);
    return error;
  }
  return fail(`${label}: expected a rejection, got the answer ${show(settled.value)}`);
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return show(error);
}

/** A short printable form of a value (long strings are cut). */
export function show(value: unknown): string {
  try {
    const text = JSON.stringify(value, (_key, inner) =>
      typeof inner === 'string' && inner.length > 80
        ? `${inner.slice(0, 40)}…(${inner.length} chars)`
        : inner,
    );
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}
