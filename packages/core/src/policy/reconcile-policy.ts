// A policy's reconcile probe: what it is given, what it answers, and its bounds. A leaf: the
// guard's reconcile step (guard/reconcile.ts) runs it; docs/reconcile.md says how to write one.
import { PolicyError } from '../errors/policy-error.js';
import { MAX_TIMER_MS } from '../store/store-input.js';

/**
 * The tool name of a probe's own lease record (one per record probed, in the same tenant): reserved,
 * so no call can use it, and left out of `guard.list` (the CLI's and the console's lists).
 */
export const RECONCILE_TOOL = 'toolfence.reconcile';

/** What a reconcile probe is asked about: one record of an EFFECTFUL call whose outcome is unknown. */
export interface ReconcileInput<TArguments = Record<string, unknown>> {
  /**
   * The call's arguments when the stopped call itself asks; `undefined` when an operator asks
   * (`guard.reconcile`, `toolfence reconcile`, the console) without giving them: records never
   * keep arguments, so a probe should find the effect by `idempotencyKey`.
   */
  readonly arguments: TArguments | undefined;
  /** The record's idempotency key: what the body passed to the provider (`currentToolCall().idempotencyKey`). */
  readonly idempotencyKey: string;
  /** The fencing token of the attempt the record holds. */
  readonly fence: number;
  /** The attempt number of the record (what the body saw as `currentToolCall().attempt`). */
  readonly attempt: number;
  /** The probe's own try, 1..`attempts`. */
  readonly probeAttempt: number;
  readonly tool: string;
  readonly tenant: string;
  /** Aborted at the try's deadline (`timeoutMs`), when the probe's lease is lost, or by the caller. */
  readonly signal: AbortSignal;
}

/**
 * A probe's answer. `detail` (optional) is a short note kept, bounded to
 * {@link MAX_RECONCILE_DETAIL_LENGTH} and escaped, in the resolution's `reason` and the event: never
 * put arguments, amounts or secrets in it.
 */
export type ReconcileVerdict =
  /** The effect happened; `outcome` is what the call returns (encoded by the guard's codec). */
  | { readonly happened: true; readonly outcome: unknown; readonly detail?: string }
  /** The effect did not happen (and cannot happen later): the key is released, the call runs again. */
  | { readonly happened: false; readonly detail?: string }
  /** The provider cannot tell: the record is left for an operator. */
  | { readonly unknown: true; readonly detail?: string };

/**
 * Ask the system the tool touched whether the effect of a call happened. Declared as a method so
 * a policy typed for one tool's arguments is still an IdempotencyPolicy.
 */
export type ReconcileProbe<TArguments = Record<string, unknown>> = {
  probe(input: ReconcileInput<TArguments>): ReconcileVerdict | PromiseLike<ReconcileVerdict>;
}['probe'];

/** A probe with its bounds. Every duration is in milliseconds. */
export interface ReconcileSettings<TArguments = Record<string, unknown>> {
  probe(input: ReconcileInput<TArguments>): ReconcileVerdict | PromiseLike<ReconcileVerdict>;
  /** Tries of the probe (a throw or a timeout is tried again; an answer is final), 1..10. Default 3. */
  readonly attempts?: number;
  /** Deadline of one try: its signal is aborted and the try counts as a timeout. Default 10000. */
  readonly timeoutMs?: number;
  /** Pause before the second try, doubled before each further one (0 allowed). Default 250. */
  readonly backoffMs?: number;
  /**
   * The lease of the probe's own record (one worker probes a record at a time), renewed every
   * `leaseMs / 3` while the probe runs. Default 30000.
   */
  readonly leaseMs?: number;
}

/** A policy's `reconcile`: a probe, or a probe with its bounds. */
export type Reconcile<TArguments = Record<string, unknown>> =
  | ReconcileProbe<TArguments>
  | ReconcileSettings<TArguments>;

/** A reconcile with its defaults filled in and checked. */
export interface ResolvedReconcile {
  readonly probe: ReconcileProbe;
  readonly attempts: number;
  readonly timeoutMs: number;
  readonly backoffMs: number;
  readonly leaseMs: number;
}

/** Defaults of {@link ReconcileSettings}. */
export const DEFAULT_RECONCILE_ATTEMPTS = 3;
export const DEFAULT_RECONCILE_TIMEOUT_MS = 10_000;
export const DEFAULT_RECONCILE_BACKOFF_MS = 250;
export const DEFAULT_RECONCILE_LEASE_MS = 30_000;
/** Most tries of one probe. */
export const MAX_RECONCILE_ATTEMPTS = 10;
/** Longest `detail` kept of a verdict, in UTF-16 code units (longer ones are cut). */
export const MAX_RECONCILE_DETAIL_LENGTH = 200;

/**
 * Fill in and check a policy's `reconcile`.
 * @throws PolicyError `reconcile` is neither a function nor `{ probe }`, or a bound is out of range
 *   (`attempts` 1..10; `timeoutMs`, `leaseMs` positive whole ms up to the longest timer; `backoffMs`
 *   a whole ms >= 0)
 */
export function resolveReconcile(
  reconcile: unknown,
  tool: string | undefined,
): ResolvedReconcile | undefined {
  if (reconcile === undefined) return undefined;
  const settings: Partial<ReconcileSettings> =
    typeof reconcile === 'function'
      ? { probe: reconcile as ReconcileProbe }
      : (reconcile as ReconcileSettings);
  if (settings === null || typeof settings !== 'object' || typeof settings.probe !== 'function') {
    throw new PolicyError('reconcile', 'must be a probe function or { probe, ...bounds }', { tool });
  }
  const attempts = settings.attempts ?? DEFAULT_RECONCILE_ATTEMPTS;
  if (!Number.isSafeInteger(attempts) || attempts < 1 || attempts > MAX_RECONCILE_ATTEMPTS) {
    throw new PolicyError(
      'reconcile.attempts',
      `must be a whole number in 1..${MAX_RECONCILE_ATTEMPTS}, got ${String(attempts)}`,
      { tool },
    );
  }
  const timeoutMs = settings.timeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
  const leaseMs = settings.leaseMs ?? DEFAULT_RECONCILE_LEASE_MS;
  const backoffMs = settings.backoffMs ?? DEFAULT_RECONCILE_BACKOFF_MS;
  for (const [field, value, minimum] of [
    ['reconcile.timeoutMs', timeoutMs, 1],
    ['reconcile.leaseMs', leaseMs, 3],
    ['reconcile.backoffMs', backoffMs, 0],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < minimum || value > MAX_TIMER_MS) {
      throw new PolicyError(
        field,
        `must be a whole number of milliseconds in ${minimum}..${MAX_TIMER_MS}, got ${String(value)}`,
        { tool },
      );
    }
  }
  const owner = settings as ReconcileSettings;
  // Called as a method of the settings it came with (`this` is theirs).
  const probe: ReconcileProbe = (input) => owner.probe(input);
  return { probe, attempts, timeoutMs, backoffMs, leaseMs };
}
