// The options of a Guard and the checks the constructor makes of them.
import type { OutcomeCodec } from '../codec/outcome-codec.js';
import { PolicyError } from '../errors/policy-error.js';
import { type KeySecret, keySecretProblem } from '../key/idempotency-key.js';
import type { PolicyDefaults } from '../policy/idempotency-policy.js';
import type { IdempotencyStore } from '../store/idempotency-store.js';
import type { TelemetryOptions } from '../telemetry/telemetry.js';
import type { GuardEventListener } from './guard-events.js';
import type { ErrorDescriber } from './recorded-error.js';

/** Options of a {@link Guard}. */
export interface GuardOptions {
  /** The shared store of records (MemoryStore, RedisStore, PostgresStore, or your own). */
  readonly store: IdempotencyStore;
  /** Default tenant of every call. Default `'default'`. */
  readonly tenant?: string;
  /** Guard-wide policy defaults (durations in milliseconds); a policy's own values win. */
  readonly defaults?: PolicyDefaults;
  /** Receives every {@link GuardEvent}. */
  readonly onEvent?: GuardEventListener;
  /** How outcomes are stored and replayed. Default {@link jsonOutcomeCodec}. */
  readonly codec?: OutcomeCodec;
  /**
   * A secret of at least 32 bytes (a `Uint8Array`, or a string taken as its UTF-8 bytes) that makes
   * every idempotency key and arguments fingerprint an HMAC-SHA-256 instead of a plain SHA-256, so
   * a record's fingerprint cannot be reversed by guessing low-entropy arguments (a PIN, an amount).
   * Rotating it changes every key. During a rotation give `[current, previous]`: keys are made and
   * claimed with `current`, and a call whose claim starts a fresh record also looks its key up
   * under `previous` (one more store read, and only then), so a call completed, stopped
   * (indeterminate, abandoned) or still running under the previous secret is replayed, stopped
   * or waited for, never run a second time (docs/key-spec.md section 6.4, the rotation
   * procedure and its race window). Default: none (plain SHA-256).
   * @throws PolicyError (from the constructor) when a secret is shorter than 32 bytes or not a
   *   secret, or `previous` is `current`.
   */
  readonly keySecret?: KeySecret | readonly [current: KeySecret, previous: KeySecret];
  /**
   * OpenTelemetry: an `execute_tool {tool}` span per guarded call and the `toolfence.guard.*`
   * metrics (docs/observability.md). Default: none (nothing of OpenTelemetry is loaded or called).
   * @throws PolicyError (from the constructor) when it has neither a tracer nor a meter provider.
   */
  readonly telemetry?: TelemetryOptions;
  /**
   * The longest a guard step waits for the store, in milliseconds, all its tries together: the
   * claim (with the resend of a claim whose reply was lost), and the recording of an outcome
   * (`complete` and its retries). This is the bound a caller can rely on per step: with a frozen
   * store a new call fails with `StoreUnavailableError`, and a call whose body ran answers its
   * value unrecorded, within about this. A try the guard stopped waiting for may still land
   * later; its fence makes that harmless. Default: the store's `operationTimeoutMs` when it
   * declares one (RedisStore, PostgresStore: 5000), else none. Longer than the store's deadline
   * leaves room for retries after a timeout; shorter also races each first try (a timer per call).
   * @throws RangeError (from the constructor) when not a whole number of ms in 1..2^31-1.
   */
  readonly storeStepTimeoutMs?: number;
  /**
   * The message recorded for an error a body threw (or a caller's abort reason): `{ message }`,
   * e.g. a redacted form of it. By default only the error's type (its name, or the `code` of a
   * plain Error) and its `code` are recorded, never its message, which is often built from the
   * arguments (a card number, an e-mail address): what lands in the store, `toolfence list`,
   * the console, events and spans (docs/operations.md, "Descriptions"). toolfence's own errors
   * (`ToolTimeoutError`, `LeaseLostError`) are recorded whole. A hook that throws or returns no
   * `message` records the default; its text is cut to 2,000 characters.
   * @throws PolicyError (from the constructor) when it is not a function.
   */
  readonly describeError?: ErrorDescriber;
}

/** `describeError`, checked. @throws PolicyError */
export function describeErrorOf(options: GuardOptions): ErrorDescriber | undefined {
  const hook: unknown = options.describeError;
  if (hook === undefined || typeof hook === 'function') return hook as ErrorDescriber | undefined;
  throw new PolicyError('describeError', `must be a function (error) => { message }, got ${typeof hook}`);
}

/**
 * `keySecret` as `[current, previous]` (previous undefined when not rotating), checked.
 * @throws PolicyError
 */
export function keySecretsOf(options: GuardOptions): [KeySecret | undefined, KeySecret | undefined] {
  if (!Object.hasOwn(options, 'keySecret')) return [undefined, undefined];
  const given: unknown = options.keySecret;
  if (!Array.isArray(given)) {
    // An explicit undefined is refused too: an unset environment variable must not quietly
    // switch keyed mode off.
    const problem = keySecretProblem(given);
    if (problem !== undefined) throw new PolicyError('keySecret', problem);
    return [given as KeySecret, undefined];
  }
  if (given.length !== 2) {
    throw new PolicyError(
      'keySecret',
      `must be one secret or [current, previous] (a rotation, docs/key-spec.md section 6.4), got ${given.length} secrets`,
    );
  }
  const [current, previous] = given as [unknown, unknown];
  for (const [name, secret] of [
    ['current', current],
    ['previous', previous],
  ] as const) {
    const problem = keySecretProblem(secret);
    if (problem !== undefined) throw new PolicyError('keySecret', `the ${name} secret ${problem}`);
  }
  if (Buffer.from(current as KeySecret).equals(Buffer.from(previous as KeySecret))) {
    throw new PolicyError('keySecret', 'the previous secret is the current one: nothing is being rotated');
  }
  return [current as KeySecret, previous as KeySecret];
}
