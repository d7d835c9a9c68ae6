// How key derivation fails: every refusal is a KeyDerivationError made by fail() (and known as
// ours), reading the input is guarded (read), and values are described for messages without
// ever throwing (show, describe).
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { describeThrown } from './canonical-json.js';
import type { KeyInput } from './key-types.js';

/** Every `KeyDerivationError` made here, so the catch-all never mistakes a thrown value for one. */
const ours = new WeakSet<object>();

export function fail(
  tool: string,
  reason: string,
  options?: { argument?: string; field?: string; cause?: unknown },
): KeyDerivationError {
  const error = new KeyDerivationError(tool, reason, options);
  ours.add(error);
  return error;
}

/** `input[field]`; a getter or Proxy trap that throws is a `KeyDerivationError` naming the field. */
/** True for a `KeyDerivationError` made by {@link fail} (read by membership, so never throws). */
export function isOurs(error: unknown): boolean {
  return typeof error === 'object' && error !== null && ours.has(error);
}

/** `input[field]`; a getter or Proxy trap that throws is a `KeyDerivationError` naming the field. */
export function read(input: object, field: keyof KeyInput, tool: string): unknown {
  try {
    return (input as Record<string, unknown>)[field];
  } catch (cause) {
    throw fail(tool, `reading ${field} of the key input threw ${describeThrown(cause)}`, { field, cause });
  }
}

/** What `value` is, for a message. Never throws (a Proxy's traps are caught). */
export function describe(value: unknown): string {
  try {
    if (value === null) return 'null';
    if (Array.isArray(value)) return 'an array';
    if (typeof value === 'object') {
      const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor
        ?.name;
      return typeof name === 'string' && name !== ''
        ? `an instance of ${show(name).slice(1, -1)}`
        : 'an object';
    }
  } catch {
    return 'an object';
  }
  return show(value);
}

/** A value for a message: strings JSON-quoted and cut to 64 code units. Never throws. */
export function show(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 64
      ? `${JSON.stringify(value.slice(0, 64))}... (${value.length} characters)`
      : JSON.stringify(value);
  }
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}
