// What the guard records and emits about an error: its type and code, never a body's message
// (often built from the arguments: a card number, an e-mail address) unless the application's
// `describeError` hook gives one. A leaf: the guard's parts and its telemetry all use it.
import { ToolfenceError } from '../errors/toolfence-error.js';
import type { RecordedError } from '../store/idempotency-store.js';

/** An error as a store records it. Never throws: a body may throw anything. */
export function describeError(error: unknown): RecordedError {
  // A body may throw a null-prototype object, a revoked proxy, an error whose message getter
  // throws; a failure here must not strand the claim.
  try {
    if (error instanceof Error) {
      const code = (error as { code?: unknown }).code;
      const name = String(error.name);
      const type = typeof code === 'string' && name === 'Error' ? code : name;
      return { type: clean(type), message: clean(String(error.message)) };
    }
    return { type: typeof error, message: clean(String(error)) };
  } catch {
    return { type: 'Unknown', message: '<an error that cannot be printed>' };
  }
}

/** Fit for every store: no NUL (PostgreSQL text cannot hold it), bounded, no split surrogate pair. */
function clean(text: string): string {
  const withoutNul = text.includes('\u0000') ? text.replaceAll('\u0000', '\\0') : text;
  if (withoutNul.length <= 2000) return withoutNul;
  const cut = /[\uD800-\uDBFF]/.test(withoutNul.charAt(1999)) ? 1999 : 2000;
  return `${withoutNul.slice(0, cut)}…`;
}

/**
 * `GuardOptions.describeError`: the message to record for an error a body threw (or the abort
 * reason a caller gave), e.g. a redacted form of it. Called once per recorded failure; a hook that
 * throws or returns no `message` records the default (the type and code only).
 */
export type ErrorDescriber = (error: unknown) => { readonly message?: string } | undefined;

/** The message recorded when the application chose none. */
export const WITHHELD = '(message not recorded)';

/**
 * An error as the guard records and emits it. toolfence's own errors (a timeout, a lost lease,
 * a lost record) carry only toolfence's text and are recorded whole; any other error keeps its
 * type (its name, or its `code` for a plain Error) and its code, and a message only from `hook`.
 * Never throws.
 */
export function recordedError(error: unknown, hook: ErrorDescriber | undefined): RecordedError {
  const described = describeError(error);
  let ours: boolean;
  try {
    ours = ToolfenceError.isInstance(error) || isGuardMade(error);
  } catch {
    // A revoked proxy throws on any look: not ours.
    ours = false;
  }
  if (ours) return described;
  const code = codeOf(error);
  const fallback = code === undefined || code === described.type ? WITHHELD : `code ${code}; ${WITHHELD}`;
  if (hook === undefined) return { type: described.type, message: fallback };
  let message: unknown;
  try {
    message = hook(error)?.message;
  } catch {
    message = undefined;
  }
  if (typeof message !== 'string') return { type: described.type, message: fallback };
  // The same bounds as every recorded text (no NUL, at most 2,000 code units).
  return { type: described.type, message: describeError(new Error(message)).message };
}

/** The reason call-errors.ts's recordLost() builds (a plain Error the guard made). */
function isGuardMade(error: unknown): boolean {
  try {
    return error instanceof Error && error.name === 'RecordLost';
  } catch {
    return false;
  }
}

/** A string or number `code` (Node's `ECONNRESET`, a provider's `card_declined`), bounded. */
function codeOf(error: unknown): string | undefined {
  try {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'number' && Number.isFinite(code)) return String(code);
    if (typeof code === 'string' && code.length > 0 && code.length <= 100 && !code.includes('\u0000'))
      return code;
    return undefined;
  } catch {
    return undefined;
  }
}
