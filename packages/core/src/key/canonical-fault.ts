// A refusal of canonicalJson while it unwinds (Fault: its reason, cause and path, collected
// container by container), and how thrown values, keys and paths are written in messages.
import { MAX_CANONICAL_LENGTH } from './canonical-limits.js';

export type Segment = string | number;

/**
 * Every {@link Fault} made here. Recognising one by membership rather than `instanceof` reads
 * nothing of the thrown value, so a thrown Proxy (even a revoked one) cannot throw again.
 */
export const faults = new WeakSet<object>();

/**
 * A refusal on its way up to {@link canonicalJson}. Each enclosing container adds its member's
 * reference token while the fault unwinds, so no path is kept while encoding succeeds.
 */
export class Fault {
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

export function isFault(error: unknown): error is Fault {
  return typeof error === 'object' && error !== null && faults.has(error);
}

/**
 * The fault for `error` thrown while the value at `segment` was read or encoded: a fault already
 * (from deeper down) gets the segment; anything else (a getter, a Proxy trap, a stack overflow)
 * becomes a fault with the error as its cause.
 */
export function faultAt(error: unknown, segment: Segment | undefined): Fault {
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

export function tooLong(): Fault {
  return new Fault(
    `the canonical text is longer than ${MAX_CANONICAL_LENGTH} UTF-16 code units`,
    undefined,
    undefined,
    true,
  );
}

export function bigIntFault(): Fault {
  return new Fault('a BigInt has no exact JSON form; send large integers as strings');
}

/** A key for a message: JSON-quoted, every code unit outside printable ASCII as `\uXXXX`. */
export function showKey(key: string): string {
  return JSON.stringify(key).replace(/[^\x20-\x7e]/g, (unit) => '\\u' + hex(unit));
}

export function hex(unit: string): string {
  return unit.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
}

/** An RFC 6901 JSON pointer from unescaped reference tokens (`~` → `~0`, `/` → `~1`). */
export function pointer(segments: readonly Segment[]): string {
  let out = '';
  for (const segment of segments) {
    out +=
      '/' +
      (typeof segment === 'number' ? String(segment) : segment.replace(/~/g, '~0').replace(/\//g, '~1'));
  }
  return out;
}
