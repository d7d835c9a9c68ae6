import { jsonOutcomeCodec } from '../codec/outcome-codec.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import type { KeySecret } from '../key/idempotency-key.js';
import {
  Idempotency,
  type IdempotencyPolicy,
  type PolicyDefaults,
  type ResolvedPolicy,
  resolvePolicy,
} from '../policy/idempotency-policy.js';
import type {
  DecideResult,
  IdempotencyRecord,
  IdempotencyStore,
  ListOptions,
  ListPage,
  ResolutionEntry,
  ResolveResult,
} from '../store/idempotency-store.js';
import { nameProblem } from '../store/store-input.js';
import type { CallTrace } from '../telemetry/call-trace.js';
import { Telemetry } from '../telemetry/telemetry.js';
import { runWithToolCall, type ToolCallContext } from './call-context.js';
import { callStateOf } from './call-state.js';
import { claimLoop } from './claim-loop.js';
import { Flight } from './flight.js';
import { describeErrorOf, type GuardOptions, keySecretsOf } from './guard-options.js';
import { GuardRuntime } from './guard-runtime.js';
import type { Body, GuardedCall } from './guard-types.js';
import { follow, NO_ANSWER } from './in-flight-calls.js';
import { cachedNameProblem } from './name-check.js';
import {
  listRecords,
  type OperatorResolution,
  type ResolveOptions,
  resolutionsOf,
  resolveRecord,
  storeResolutionOf,
} from './operator.js';
import {
  type ApprovalOptions,
  type ApprovalRequest,
  decideCall,
  decideRequest,
  listApprovals,
} from './operator-approvals.js';
import { stepBudgetOf } from './step-budget.js';

export type { OperatorResolution, ResolveOptions } from './operator.js';
export type { ApprovalOptions, ApprovalRequest } from './operator-approvals.js';

/** Records in one page of `guard.list` when no `limit` is given. */
export const DEFAULT_LIST_LIMIT = 100;

// The coordinator: what each file of this folder does for a call is in docs/design.md ("Where
// each idea lives"); the rules G1-G6 it keeps are docs/guarantee.md.

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
    this.runtime = new GuardRuntime({
      store,
      codec: options.codec ?? jsonOutcomeCodec,
      onEvent: options.onEvent,
      stepBudget: stepBudgetOf(options.store, options.storeStepTimeoutMs),
      describeError: describeErrorOf(options),
    });
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
    if (trace !== undefined) {
      state.trace = trace;
      trace.attach(state.ref);
    }
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
   * `options.force` gives a reason. `{ outcome }` records what happened (repeats will get it); `{ released: true }` frees
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
    // The record's own retention (its call's) unless the operator gives one.
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

  /**
   * Operator: approve `call` to run ONCE (its policy needs `approval: 'required'`). `call` is
   * what `guard.run` is given (tool, arguments, policy, runId, tenant): the approval is bound to
   * the key and argument fingerprint `run` derives from it, and the claim of that call consumes
   * it. Answers (docs/approvals.md): `decided`; `denied` (a denial stands); `consumed` (the call
   * was claimed already: the approval was used); `conflict` (another tool or other arguments hold
   * the key); `changed` / `not_found` (with `expect`: the request looked at is gone).
   * @throws KeyDerivationError the key cannot be derived (nothing written)
   * @throws StoreConfigurationError the store keeps no approvals
   * @throws StoreInputError `by`, `reason`, `expect` or `retentionMs` outside the store limits (nothing written)
   * @throws StoreUnavailableError
   */
  async approve(call: Omit<GuardedCall, 'signal'>, options: ApprovalOptions = {}): Promise<DecideResult> {
    return this.decideOnCall(call, true, options);
  }

  /**
   * Operator: deny `call` (or revoke its approval before it was used): every repeat, resume or
   * replay of it throws `ApprovalDeniedError` while the store keeps the decision. Answers and
   * errors as {@link Guard.approve}; a denial of a claimed call is `consumed` (nothing written).
   */
  async deny(call: Omit<GuardedCall, 'signal'>, options: ApprovalOptions = {}): Promise<DecideResult> {
    return this.decideOnCall(call, false, options);
  }

  /**
   * Operator: decide on a request listed by {@link Guard.approvals} (a console or CLI that has the
   * record, not the call): only that request (its `owner`) is decided.
   * @throws StoreConfigurationError, StoreInputError, StoreUnavailableError
   */
  async decide(
    request: ApprovalRequest,
    approved: boolean,
    options: ApprovalOptions = {},
  ): Promise<DecideResult> {
    const fallbackMs = this.policyOf({ kind: Idempotency.IDEMPOTENT }, '').retentionMs;
    return decideRequest(this.runtime, request, approved, options, fallbackMs);
  }

  /**
   * Operator: a page of the calls waiting for a decision (`awaiting_approval`) of the guard's
   * tenant unless `tenant` or `allTenants` says otherwise. Never returns arguments.
   * @throws StoreInputError, StoreConfigurationError, StoreUnavailableError
   */
  async approvals(options: Omit<ListOptions, 'limit'> & { readonly limit?: number } = {}): Promise<ListPage> {
    const tenant = options.allTenants === true ? undefined : (options.tenant ?? this.tenant);
    return listApprovals(this.runtime, {
      ...options,
      ...(tenant === undefined ? {} : { tenant }),
      limit: options.limit ?? DEFAULT_LIST_LIMIT,
    });
  }

  private decideOnCall(
    call: Omit<GuardedCall, 'signal'>,
    approved: boolean,
    options: ApprovalOptions,
  ): Promise<DecideResult> {
    try {
      if (call === null || typeof call !== 'object') throw new TypeError('guard.approve needs a call object');
      const toolProblem = cachedNameProblem(call.tool);
      if (toolProblem !== undefined)
        throw new KeyDerivationError(String(call.tool), `the tool name ${toolProblem}`);
      const policy = this.policyOf(call.policy, call.tool);
      const state = callStateOf(call, policy, this.tenant, this.keySecret, this.previousKeySecret);
      return decideCall(this.runtime, state, policy, approved, options);
    } catch (error) {
      return Promise.reject(error);
    }
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
