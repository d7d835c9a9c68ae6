import { jsonOutcomeCodec, type OutcomeCodec } from '../codec/outcome-codec.js';
import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { type KeySecret, keySecretProblem } from '../key/idempotency-key.js';
import {
  Idempotency,
  type IdempotencyPolicy,
  type PolicyDefaults,
  type ResolvedPolicy,
  resolvePolicy,
} from '../policy/idempotency-policy.js';
import type {
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  ResolutionEntry,
  ResolveResult,
} from '../store/idempotency-store.js';
import { nameProblem } from '../store/store-input.js';
import type { CallTrace } from '../telemetry/call-trace.js';
import { Telemetry, type TelemetryOptions } from '../telemetry/telemetry.js';
import { runWithToolCall, type ToolCallContext } from './call-context.js';
import { type Body, callStateOf } from './call-state.js';
import { claimLoop } from './claim-loop.js';
import type { GuardEvent, GuardEventListener } from './guard-events.js';
import { GuardRuntime } from './guard-runtime.js';
import { Flight, follow, NO_ANSWER } from './in-flight-calls.js';
import { cachedNameProblem } from './name-check.js';
import {
  listRecords,
  type OperatorResolution,
  type ResolveOptions,
  resolutionsOf,
  resolveRecord,
  storeResolutionOf,
} from './operator.js';
import type { ErrorDescriber } from './recorded-error.js';
import { stepBudgetOf } from './step-budget.js';

export type { OperatorResolution, ResolveOptions } from './operator.js';

/** Records in one page of `guard.list` when no `limit` is given. */
export const DEFAULT_LIST_LIMIT = 100;

// The coordinator. A call's way through the files of this folder:
//   call-state.ts          its key and fingerprint, checked before any store is asked
//   in-flight-calls.ts     identical calls in this process follow one leader
//   claim-loop.ts          claim; wait for a holder; answer a settled record; rule G1
//   attempt.ts             run the body under a lease: lease-confirmation.ts (rule G2),
//                          lease-keeper.ts, lazy-aborter.ts (the body's signal)
//   outcome-recording.ts   record the body's value (rule G5)
//   late-settlement.ts     a body that settles after its caller was answered (rule G4)
//   guard-runtime.ts, call-errors.ts   what the parts share
//   ../telemetry/          the call's span and metric points, when the telemetry option is set
// The rules G1-G6: docs/guarantee.md.

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

/** One call to guard. */
export interface GuardedCall {
  /** Tool name; part of the key. */
  readonly tool: string;
  /** The call's arguments, as the tool receives them (a plain object). */
  readonly arguments: Record<string, unknown>;
  /** The SDK's tool call id (LangChain `tool_call.id`, AI SDK `toolCallId`). */
  readonly callId?: string | undefined;
  /** The agent run (thread, conversation) the call belongs to; part of `'run'`-scoped keys. */
  readonly runId?: string | undefined;
  /** Overrides the guard's tenant for this call. */
  readonly tenant?: string | undefined;
  readonly policy: IdempotencyPolicy;
  /** The caller's signal: aborts waiting, and aborts the body through its context signal. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * The dispatcher: for each guarded call derives the idempotency key, claims it in the store, and
 * runs the body at most once per key (the rules G1-G6 of docs/guarantee.md in the repository; the
 * design in docs/design.md):
 * - `completed`: returns the recorded outcome without entering the body (`tool.deduplicated`);
 * - `busy`: waits for the holder's answer (woken by the store, bounded by `waitTimeoutMs`);
 * - `acquired`: runs the body with a {@link ToolCallContext}, renews the lease every
 *   `heartbeatMs`, aborts the body's signal when the lease is lost or at `timeoutMs`, and
 *   records the result under its fencing token.
 *
 * Failures per kind: IDEMPOTENT releases the claim and rethrows; EFFECTFUL keeps the claim as
 * indeterminate and throws {@link IndeterminateOutcomeError}, unless `isNoEffectError` says the
 * effect did not happen. READ_ONLY calls run the body and record nothing.
 */
export class Guard {
  readonly store: IdempotencyStore;
  readonly tenant: string;
  private readonly defaults: PolicyDefaults;
  private readonly keySecret: KeySecret | undefined;
  /** The previous secret of a rotation (`keySecret: [current, previous]`), looked up only. */
  private readonly previousKeySecret: KeySecret | undefined;
  private readonly resolved = new WeakMap<IdempotencyPolicy, ResolvedPolicy>();
  private readonly flights = new Map<string, Flight>();
  private readonly runtime: GuardRuntime;
  private readonly telemetry: Telemetry | undefined;

  /**
   * @throws PolicyError when `defaults` are invalid.
   * @throws RangeError when `storeStepTimeoutMs` is not a whole number of ms in 1..2^31-1.
   */
  constructor(options: GuardOptions) {
    if (options?.store === undefined) throw new TypeError('Guard needs a store');
    const tenant = options.tenant ?? 'default';
    const tenantProblem = nameProblem(tenant);
    if (tenantProblem !== undefined) throw new TypeError(`Guard tenant ${tenantProblem}`);
    this.store = options.store;
    this.tenant = tenant;
    this.defaults = options.defaults ?? {};
    this.telemetry = Telemetry.of(options.telemetry, options.store);
    const store = this.telemetry?.traceStore(options.store) ?? options.store;
    this.runtime = new GuardRuntime(
      store,
      options.codec ?? jsonOutcomeCodec,
      options.onEvent,
      stepBudgetOf(options.store, options.storeStepTimeoutMs),
      describeErrorOf(options),
    );
    const [secret, previous] = keySecretsOf(options);
    // Copies: bytes the caller changes later (or shares with another thread) must not change keys.
    this.keySecret = secret === undefined || typeof secret === 'string' ? secret : Uint8Array.from(secret);
    this.previousKeySecret =
      previous === undefined || typeof previous === 'string' ? previous : Uint8Array.from(previous);
    // Check the defaults once, where they are written.
    resolvePolicy({ kind: Idempotency.IDEMPOTENT }, this.defaults);
  }

  /**
   * Fill in and check a policy against this guard's defaults. Adapters call it when a tool is
   * wrapped, with the tool's parameter names, so a bad policy fails there and not at a call.
   * @throws PolicyError
   */
  checkPolicy(
    policy: IdempotencyPolicy,
    options: { tool?: string; parameterNames?: readonly string[] } = {},
  ): ResolvedPolicy {
    const resolved = resolvePolicy(policy, this.defaults, options);
    this.resolved.set(policy, resolved);
    return resolved;
  }

  /**
   * Run `body` for `call` under the call's policy.
   *
   * @returns the body's result (first run) or the recorded outcome decoded by the codec (repeat).
   * @throws KeyDerivationError the key cannot be derived (body not run, nothing claimed)
   * @throws StoreUnavailableError the store cannot be reached before the body ran (body not run)
   * @throws IdempotencyConflictError the key is held with other arguments or another tool
   * @throws IndeterminateOutcomeError an EFFECTFUL call's outcome is unknown
   * @throws ExecutionAbandonedError an IDEMPOTENT call lost `maxAttempts` holders
   * @throws OutcomePendingError another caller still runs it past `waitTimeoutMs`
   * @throws ToolTimeoutError an IDEMPOTENT body ran past `timeoutMs`
   * @throws PolicyError the policy is invalid
   * and whatever the body throws (IDEMPOTENT, or EFFECTFUL with a no-effect error).
   */
  run<T>(call: GuardedCall, body: Body<T>): Promise<T> {
    // Not `async`: returning runCall's promise itself saves a promise and the two microtasks an
    // async function takes to adopt a returned promise; what throws here still rejects.
    try {
      checkRunArguments(call, body);
      const policy = this.policyOf(call.policy, call.tool);
      const telemetry = this.telemetry;
      if (telemetry === undefined) return this.runCall(call, policy, body, undefined);
      return telemetry.run(call, policy.kind, body, (timed, trace) =>
        this.runCall(call, policy, timed, trace),
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async runCall<T>(
    call: GuardedCall,
    policy: ResolvedPolicy,
    body: Body<T>,
    trace: CallTrace | undefined,
  ): Promise<T> {
    if (policy.kind === Idempotency.READ_ONLY) {
      const context = readOnlyContext(call, this.tenant);
      return await runWithToolCall(context, () => body(context));
    }
    const state = callStateOf(call, policy, this.tenant, this.keySecret, this.previousKeySecret);
    trace?.attach(state);
    // Identical calls in flight in this process share one claim: the first leads, the rest follow
    // it and take its recorded outcome, so N local duplicates cost the store one claim, not N.
    const leader = this.flights.get(state.flightKey);
    if (leader !== undefined) {
      const followed = await follow<T>(this.runtime, state, leader);
      if (followed !== NO_ANSWER) return followed;
      // The leader settled without a recorded outcome (it failed, or its result went unrecorded):
      // ask the store as any caller would.
      return (await claimLoop<T>(this.runtime, state, body, true)).value;
    }
    const flight = new Flight(this.flights, state.flightKey);
    state.flight = flight;
    try {
      const answer = await claimLoop<T>(this.runtime, state, body, false);
      flight.finish(answer.encoded === undefined ? undefined : answer);
      return answer.value;
    } catch (error) {
      flight.finish(undefined);
      throw error;
    } finally {
      flight.land();
    }
  }

  /**
   * Operator: settle an `indeterminate` or `abandoned` record, or an `in_progress` one whose
   * holder is gone (its lease expired by the store's clock), after checking the system the tool
   * touched. An `in_progress` record whose holder is alive (its lease renewed: its body may still
   * take effect, also after its caller was answered) is refused with `HolderAliveError` unless
   * `options.force` gives a reason (issue #27). `{ outcome }` records what happened (repeats will get it); `{ released: true }` frees
   * the key so the call may run again. `by` and `reason` are kept with the resolution (read them
   * with {@link Guard.resolutions}); a `tool.resolved` event tells the listener.
   *
   * The resolution settles only the record the operator looked at: `options.expect` (its
   * `{ fence, owner }`, e.g. from `guard.list`), else the one the guard reads first. Answers:
   * `resolved`; `not_found` (no live record); `changed` (another holder is under the key now:
   * another attempt, or a new life after a release or expiry; `record` is the one there, nothing
   * written; look again before deciding); `not_resolvable` (already completed).
   * @throws HolderAliveError the record's holder is alive and `force` was not given (nothing changed)
   * @throws TypeError the resolution is neither `{ outcome }` nor `{ released: true }`, or `force` is not `{ reason }`
   * @throws OutcomeEncodingError the codec cannot encode the outcome (nothing changed)
   * @throws StoreInputError `by`, `reason`, `expect`, `tenant` or `retentionMs` outside the store limits (nothing changed)
   * @throws StoreUnavailableError
   */
  async resolve(
    key: string,
    resolution: OperatorResolution,
    options: ResolveOptions = {},
  ): Promise<ResolveResult> {
    const ref = { tenant: options.tenant ?? this.tenant, key };
    // The record's own retention (its call's) unless the operator gives one (issue #27).
    const fallbackMs = this.policyOf({ kind: Idempotency.IDEMPOTENT }, '').retentionMs;
    const storeResolution = storeResolutionOf(this.runtime, resolution, options);
    return resolveRecord(this.runtime, ref, storeResolution, { givenMs: options.retentionMs, fallbackMs });
  }

  /**
   * Operator: a page of records by state (default: indeterminate, abandoned, lease_expired) of
   * the guard's tenant unless `tenant` or `allTenants` says otherwise. Never returns outcomes.
   * @throws StoreInputError bad options (nothing read)
   * @throws StoreConfigurationError the store has no `list`
   * @throws StoreUnavailableError
   */
  async list(options: Omit<ListOptions, 'limit'> & { readonly limit?: number } = {}): Promise<ListPage> {
    const tenant = options.allTenants === true ? undefined : (options.tenant ?? this.tenant);
    return listRecords(this.runtime, {
      ...options,
      ...(tenant === undefined ? {} : { tenant }),
      limit: options.limit ?? DEFAULT_LIST_LIMIT,
    });
  }

  /**
   * Operator: the resolutions of a key, newest first (also after a `released` one deleted it).
   * @throws StoreConfigurationError the store keeps no resolutions
   * @throws StoreUnavailableError
   */
  async resolutions(key: string, options: { tenant?: string } = {}): Promise<readonly ResolutionEntry[]> {
    return resolutionsOf(this.runtime, { tenant: options.tenant ?? this.tenant, key });
  }

  /** Operator: read the record of a key (null when absent). @throws StoreUnavailableError */
  async inspect(key: string, options: { tenant?: string } = {}): Promise<IdempotencyRecord | null> {
    const ref = { tenant: options.tenant ?? this.tenant, key };
    return this.runtime.storeCall('get', () => this.store.get(ref));
  }

  private policyOf(policy: IdempotencyPolicy, tool: string): ResolvedPolicy {
    let resolved = this.resolved.get(policy);
    if (resolved === undefined) {
      resolved = resolvePolicy(policy, this.defaults, { tool });
      this.resolved.set(policy, resolved);
    }
    return resolved;
  }
}

/** `describeError`, checked. @throws PolicyError */
function describeErrorOf(options: GuardOptions): ErrorDescriber | undefined {
  const hook: unknown = options.describeError;
  if (hook === undefined || typeof hook === 'function') return hook as ErrorDescriber | undefined;
  throw new PolicyError('describeError', `must be a function (error) => { message }, got ${typeof hook}`);
}

/**
 * `keySecret` as `[current, previous]` (previous undefined when not rotating), checked.
 * @throws PolicyError
 */
function keySecretsOf(options: GuardOptions): [KeySecret | undefined, KeySecret | undefined] {
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

/** The arguments of `guard.run`, checked before anything else. */
function checkRunArguments(call: GuardedCall, body: unknown): void {
  if (typeof body !== 'function') throw new TypeError('guard.run needs a body function');
  if (call === null || typeof call !== 'object') throw new TypeError('guard.run needs a call object');
  const toolProblem = cachedNameProblem(call.tool);
  if (toolProblem !== undefined) {
    // Checked before anything else: a name no store can take must never reach a store.
    throw new KeyDerivationError(String(call.tool), `the tool name ${toolProblem}`);
  }
}

/** The context of a READ_ONLY call: no key, no claim. */
function readOnlyContext(call: GuardedCall, tenant: string): ToolCallContext {
  return {
    idempotencyKey: '',
    attempt: 1,
    fence: 0,
    signal: call.signal ?? new AbortController().signal,
    tenant: call.tenant ?? tenant,
    runId: call.runId,
    callId: call.callId,
    tool: call.tool,
  };
}
