import { PolicyError } from '../errors/policy-error.js';
import { MAX_RETENTION_MS, MAX_TIMER_MS } from '../store/store-input.js';

/**
 * How repeating a tool call affects the world; decides how toolfence guards it.
 *
 * | kind | repeating it | on a lost attempt | on a thrown error |
 * |---|---|---|---|
 * | `READ_ONLY` | does nothing | — (no record) | rethrown |
 * | `IDEMPOTENT` | lands the same state | re-run, fence + 1 (at-least-once, up to `maxAttempts`) | claim released, rethrown |
 * | `EFFECTFUL` | a second effect | never re-run: indeterminate (at-most-once) | indeterminate, unless `isNoEffectError` says no effect |
 */
export const Idempotency = {
  READ_ONLY: 'read_only',
  IDEMPOTENT: 'idempotent',
  EFFECTFUL: 'effectful',
} as const;

export type IdempotencyKind = (typeof Idempotency)[keyof typeof Idempotency];

/**
 * How the idempotency key of a call is made:
 * - `'arguments'` (default): the arguments named by `keyArguments`, or all of them.
 * - `'call'`: the SDK's tool call id. A redelivery or replay of one call collapses; two calls
 *   with identical arguments both run.
 * - a function: a business key such as `refund:A-100`, hashed with tenant, scope and tool.
 *   It must return a non-empty string; a reused key with other arguments is an
 *   `IdempotencyConflictError` (IETF Idempotency-Key draft, Stripe).
 */
export type KeyStrategy<TArguments = Record<string, unknown>> =
  | 'arguments'
  | 'call'
  // Declared as a method so a policy typed for one tool's arguments is still an IdempotencyPolicy.
  | { businessKey(args: TArguments): string }['businessKey'];

/**
 * The names a policy may list in `keyArguments` for arguments of type `TArguments`: its string
 * keys when they are known, any string otherwise.
 */
export type ArgumentName<TArguments> = string extends keyof TArguments
  ? string
  : Extract<keyof TArguments, string>;

/**
 * `'run'` (default): the run id is part of the key, so the same call in another run is a new
 * call. `'tenant'`: the key holds across runs of the tenant (a business key).
 */
export type KeyScope = 'run' | 'tenant';

/**
 * Settings of one guarded tool. Every duration is in milliseconds.
 *
 * `TArguments` is the tool's (parsed) argument type where it is known: the adapters' `fenceTool`
 * / `fenceTools` infer it from the tool's schema, so a misspelt `keyArguments` name is a compile
 * error and a `key` function gets the tool's own argument type.
 */
export interface IdempotencyPolicy<TArguments = Record<string, unknown>> {
  readonly kind: IdempotencyKind;
  /** Arguments that name the effect; the key is made from these only. Default: all arguments. */
  readonly keyArguments?: readonly ArgumentName<TArguments>[];
  /** Default `'arguments'`. See {@link KeyStrategy}. */
  readonly key?: KeyStrategy<TArguments>;
  /** Default `'run'`. See {@link KeyScope}. */
  readonly scope?: KeyScope;
  /** Lease length. Default 30000. */
  readonly leaseMs?: number;
  /** Lease renewal period; must be shorter than `leaseMs`. Default `leaseMs / 3`. */
  readonly heartbeatMs?: number;
  /** Most attempts of an IDEMPOTENT call whose holders were lost (not thrown errors). Default 3. */
  readonly maxAttempts?: number;
  /** How long a settled record is kept; must be at least `leaseMs`. Default 86400000 (one day). */
  readonly retentionMs?: number;
  /** Deadline of one execution of the body; none by default. */
  readonly timeoutMs?: number;
  /** How long a duplicate waits for the holder's answer. Default `2 × leaseMs`. */
  readonly waitTimeoutMs?: number;
  /**
   * For EFFECTFUL tools: true when an error proves the effect did NOT happen (a validation
   * refusal, a 4xx the provider guarantees was not applied). Only then is the claim released.
   * Default: no error qualifies (any error is indeterminate).
   */
  readonly isNoEffectError?: (error: unknown) => boolean;
  /**
   * With `keyArguments` naming only some arguments, what a repeat whose OTHER arguments differ
   * gets: `'replay'` (default) the recorded outcome, as the key says (the `tool.deduplicated` event
   * then carries `argumentsDiffer: true`); `'conflict'` an `IdempotencyConflictError`, as business
   * keys do. A repeat is defined by the key arguments; the others may differ on a retry (a new
   * timestamp, a reworded memo) and are compared through the record's fingerprint only.
   */
  readonly onArgumentsMismatch?: ArgumentsMismatch;
  /**
   * Opt-in: a short human description of a call for operators (`toolfence list`, `inspect`), e.g.
   * `(args) => \`refund ${args.orderId} ${args.currency} ${args.amount}\``. The ONE place where
   * text derived from the arguments is stored in a record: leave it out for arguments that must
   * not be kept. Cut to `MAX_DESCRIPTION_LENGTH` (512) code units. A describe that throws or
   * returns anything but a non-empty string leaves the record without a description: the call
   * itself is never refused or lost for it (docs/operations.md, "Descriptions").
   */
  readonly describe?: (args: TArguments) => string;
  /**
   * `'required'`: the call runs only once an operator approved THIS call (its key, tool and
   * argument fingerprint) in the store (`guard.approve`); until then it throws
   * `ApprovalRequiredError` and nothing runs, and a denial throws `ApprovalDeniedError`. The claim
   * consumes the approval in its own atomic step: an approved call runs once, whatever number of
   * resumes or replays arrive (docs/approvals.md). Needs a store with `decideApproval`
   * (`StoreConfigurationError` otherwise).
   */
  readonly approval?: 'required';
}

/** What a repeat whose non-key arguments differ gets: see `IdempotencyPolicy.onArgumentsMismatch`. */
export type ArgumentsMismatch = 'replay' | 'conflict';

/**
 * Guard-wide defaults a policy may override: the timing fields of {@link IdempotencyPolicy}, with
 * the same meaning, defaults and limits. Durations in milliseconds.
 */
export type PolicyDefaults = Pick<
  IdempotencyPolicy,
  'leaseMs' | 'heartbeatMs' | 'maxAttempts' | 'retentionMs' | 'timeoutMs' | 'waitTimeoutMs'
>;

/** A policy with every default filled in and checked. */
export interface ResolvedPolicy {
  readonly kind: IdempotencyKind;
  readonly keyArguments: readonly string[] | undefined;
  readonly key: KeyStrategy;
  readonly scope: KeyScope;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly maxAttempts: number;
  readonly retentionMs: number;
  readonly timeoutMs: number | undefined;
  readonly waitTimeoutMs: number;
  readonly isNoEffectError: (error: unknown) => boolean;
  readonly onArgumentsMismatch: ArgumentsMismatch;
  readonly describe: ((args: Record<string, unknown>) => string) | undefined;
  readonly approval: 'required' | undefined;
}

/** Documented defaults. */
export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_RETENTION_MS = 86_400_000;

const kinds: ReadonlySet<string> = new Set(Object.values(Idempotency));
const noError = (): boolean => false;

function checkMilliseconds(field: string, value: unknown, tool: string | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new PolicyError(field, `must be a positive whole number of milliseconds, got ${String(value)}`, {
      tool,
    });
  }
  // Leases, heartbeats, timeouts and waits are timers; retention is a deadline in the store, bounded
  // so that every store's epoch-ms deadline stays an exact integer (docs/store-contract.md).
  const isRetention = field.endsWith('retentionMs');
  const maxMs = isRetention ? MAX_RETENTION_MS : MAX_TIMER_MS;
  if (value > maxMs) {
    const why = isRetention ? 'the longest retention window, 10 years' : 'the longest Node.js timer';
    throw new PolicyError(field, `must be at most ${maxMs} ms (${why}), got ${value}`, { tool });
  }
}

/**
 * Fill in the defaults of `policy` (per-tool values win over `defaults`) and check it.
 *
 * @param parameterNames the tool's parameter names when its schema is known; every
 *   `keyArguments` entry must be one of them.
 * @throws PolicyError for an unknown kind, non-positive or non-integer milliseconds, a timer
 *   duration (all but `retentionMs`) above {@link MAX_TIMER_MS}, a `retentionMs` above
 *   {@link MAX_RETENTION_MS},
 *   `heartbeatMs >= leaseMs`, `maxAttempts < 1`, `retentionMs < leaseMs`, an empty list of key
 *   arguments, an empty or duplicated key argument, a key argument that is not a parameter, or `keyArguments`
 *   given together with a `'call'` or function key.
 */
export function resolvePolicy(
  policy: IdempotencyPolicy,
  defaults: PolicyDefaults = {},
  options: { tool?: string; parameterNames?: readonly string[] } = {},
): ResolvedPolicy {
  const tool = options.tool;
  if (policy === null || typeof policy !== 'object') {
    throw new PolicyError('policy', 'must be an object', { tool });
  }
  if (!kinds.has(policy.kind)) {
    throw new PolicyError('kind', `must be one of ${[...kinds].join(', ')}, got ${String(policy.kind)}`, {
      tool,
    });
  }
  const timings = resolveTimings(policy, defaults, tool);

  const key = policy.key ?? 'arguments';
  if (key !== 'arguments' && key !== 'call' && typeof key !== 'function') {
    throw new PolicyError('key', `must be 'arguments', 'call' or a function, got ${String(key)}`, { tool });
  }
  const scope = policy.scope ?? 'run';
  if (scope !== 'run' && scope !== 'tenant') {
    throw new PolicyError('scope', `must be 'run' or 'tenant', got ${String(scope)}`, { tool });
  }
  const keyArguments = policy.keyArguments;
  if (keyArguments !== undefined) checkKeyArguments(keyArguments, key, options.parameterNames, tool);
  if (policy.isNoEffectError !== undefined && typeof policy.isNoEffectError !== 'function') {
    throw new PolicyError('isNoEffectError', 'must be a function', { tool });
  }
  if (policy.describe !== undefined && typeof policy.describe !== 'function') {
    throw new PolicyError('describe', 'must be a function', { tool });
  }
  const onArgumentsMismatch = policy.onArgumentsMismatch ?? 'replay';
  if (onArgumentsMismatch !== 'replay' && onArgumentsMismatch !== 'conflict') {
    throw new PolicyError(
      'onArgumentsMismatch',
      `must be 'replay' or 'conflict', got ${String(onArgumentsMismatch)}`,
      {
        tool,
      },
    );
  }
  if (policy.approval !== undefined && policy.approval !== 'required') {
    throw new PolicyError('approval', `must be 'required' when present, got ${String(policy.approval)}`, {
      tool,
    });
  }
  if (policy.approval === 'required' && policy.kind === Idempotency.READ_ONLY) {
    // A READ_ONLY call claims nothing, so no claim could consume an approval: it would run unasked.
    throw new PolicyError('approval', 'a READ_ONLY call claims nothing, so it cannot require an approval', {
      tool,
    });
  }

  return {
    kind: policy.kind,
    keyArguments: keyArguments === undefined ? undefined : [...keyArguments],
    key,
    scope,
    ...timings,
    isNoEffectError: policy.isNoEffectError ?? noError,
    onArgumentsMismatch,
    describe: policy.describe,
    approval: policy.approval,
  };
}

/** The policy's durations and attempts, its own or the defaults', checked against each other. */
function resolveTimings(
  policy: IdempotencyPolicy,
  defaults: PolicyDefaults,
  tool: string | undefined,
): Pick<
  ResolvedPolicy,
  'leaseMs' | 'heartbeatMs' | 'maxAttempts' | 'retentionMs' | 'timeoutMs' | 'waitTimeoutMs'
> {
  for (const [field, value] of Object.entries(defaults)) {
    if (field !== 'maxAttempts') checkMilliseconds(`defaults.${field}`, value, tool);
  }
  for (const field of ['leaseMs', 'heartbeatMs', 'retentionMs', 'timeoutMs', 'waitTimeoutMs'] as const) {
    checkMilliseconds(field, policy[field], tool);
  }

  const leaseMs = policy.leaseMs ?? defaults.leaseMs ?? DEFAULT_LEASE_MS;
  // A lease given without a heartbeat gets a heartbeat that fits it, not the guard-wide one.
  const heartbeatMs =
    policy.heartbeatMs ??
    (policy.leaseMs === undefined ? defaults.heartbeatMs : undefined) ??
    Math.max(1, Math.floor(leaseMs / 3));
  const maxAttempts = policy.maxAttempts ?? defaults.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const retentionMs = policy.retentionMs ?? defaults.retentionMs ?? DEFAULT_RETENTION_MS;
  const timeoutMs = policy.timeoutMs ?? defaults.timeoutMs;
  const waitTimeoutMs =
    policy.waitTimeoutMs ??
    (policy.leaseMs === undefined ? defaults.waitTimeoutMs : undefined) ??
    2 * leaseMs;

  if (heartbeatMs >= leaseMs) {
    throw new PolicyError('heartbeatMs', `(${heartbeatMs}) must be shorter than leaseMs (${leaseMs})`, {
      tool,
    });
  }
  if (typeof maxAttempts !== 'number' || !Number.isSafeInteger(maxAttempts) || maxAttempts < 1) {
    throw new PolicyError('maxAttempts', `must be a whole number >= 1, got ${String(maxAttempts)}`, { tool });
  }
  if (retentionMs < leaseMs) {
    throw new PolicyError('retentionMs', `(${retentionMs}) must be at least leaseMs (${leaseMs})`, { tool });
  }
  return { leaseMs, heartbeatMs, maxAttempts, retentionMs, timeoutMs, waitTimeoutMs };
}

/** `keyArguments`: a non-empty array of distinct names, each a parameter when they are known. */
function checkKeyArguments(
  keyArguments: unknown,
  key: unknown,
  parameterNames: readonly string[] | undefined,
  tool: string | undefined,
): void {
  if (!Array.isArray(keyArguments)) {
    throw new PolicyError('keyArguments', 'must be an array of argument names', { tool });
  }
  if (key !== 'arguments') {
    throw new PolicyError('keyArguments', "applies only to the 'arguments' key strategy", { tool });
  }
  if (keyArguments.length === 0) {
    // Every call of the tool would share one key: refuse rather than merge unrelated calls.
    throw new PolicyError('keyArguments', 'must name at least one argument (omit it to key on all)', {
      tool,
    });
  }
  const seen = new Set<string>();
  for (const name of keyArguments) {
    if (typeof name !== 'string' || name.length === 0) {
      throw new PolicyError('keyArguments', `must hold non-empty names, got ${JSON.stringify(name)}`, {
        tool,
      });
    }
    if (seen.has(name)) throw new PolicyError('keyArguments', `names "${name}" twice`, { tool });
    seen.add(name);
    if (parameterNames !== undefined && !parameterNames.includes(name)) {
      throw new PolicyError(
        'keyArguments',
        `names "${name}", which is not a parameter of the tool (parameters: ${parameterNames.join(', ') || 'none'})`,
        { tool },
      );
    }
  }
}

/**
 * Define a policy, checking it at once (so a bad policy fails where it is written).
 * @throws PolicyError as {@link resolvePolicy}.
 */
export function definePolicy<const P extends IdempotencyPolicy>(policy: P): P {
  resolvePolicy(policy);
  return policy;
}
