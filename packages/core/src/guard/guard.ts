import { jsonOutcomeCodec, type OutcomeCodec } from '../codec/outcome-codec.js';
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import type { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import { argumentsFingerprint, idempotencyKey } from '../key/idempotency-key.js';
import {
  Idempotency,
  type IdempotencyPolicy,
  type PolicyDefaults,
  type ResolvedPolicy,
  resolvePolicy,
} from '../policy/idempotency-policy.js';
import type {
  ClaimOptions,
  ClaimResult,
  CompleteResult,
  Holder,
  IdempotencyRecord,
  IdempotencyStore,
  RecordRef,
  ResolveResult,
} from '../store/idempotency-store.js';
import { nameProblem } from '../store/store-input.js';
import { runAttempt } from './attempt.js';
import { currentToolCall, runWithToolCall, type ToolCallContext } from './call-context.js';
import { asStoreError, describeError, indeterminateOutcomeError, recordLost } from './call-errors.js';
import {
  type Answer,
  type Body,
  type CallProgress,
  type CallState,
  NO_ATTEMPT,
  SUPERSEDED,
} from './call-state.js';
import type { GuardEvent, GuardEventListener } from './guard-events.js';
import { GuardRuntime } from './guard-runtime.js';
import { Flight, follow, NO_ANSWER } from './in-flight-calls.js';
import { completeWithRetry, isRecorded } from './outcome-recording.js';

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

/** How an operator settles an indeterminate or abandoned record. */
export type OperatorResolution =
  /** The effect happened; record this outcome (encoded by the guard's codec). */
  | { readonly outcome: unknown }
  /** The effect did not happen; free the key so the call may run again. */
  | { readonly released: true };

/** Pause before asking the store again for a claim whose reply was lost. */
const CLAIM_RETRY_DELAY_MS = 25;

/** Sentinel: a call that ran its body before may run it again (IDEMPOTENT, below maxAttempts). */
const RUN_AGAIN = Symbol('run again');

/** A claim's answer and when (monotonic ms) the request that got it was sent. */
interface SentClaim {
  readonly claim: ClaimResult;
  readonly sentAtMs: number;
}

/**
 * The dispatcher: for each guarded call derives the idempotency key, claims it in the store, and
 * runs the body at most once per key (DESIGN.md, "The guard"):
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
  private readonly resolved = new WeakMap<IdempotencyPolicy, ResolvedPolicy>();
  private readonly flights = new Map<string, Flight>();
  private readonly runtime: GuardRuntime;

  /** @throws PolicyError when `defaults` are invalid. */
  constructor(options: GuardOptions) {
    if (options?.store === undefined) throw new TypeError('Guard needs a store');
    const tenant = options.tenant ?? 'default';
    const tenantProblem = nameProblem(tenant);
    if (tenantProblem !== undefined) throw new TypeError(`Guard tenant ${tenantProblem}`);
    this.store = options.store;
    this.tenant = tenant;
    this.defaults = options.defaults ?? {};
    this.runtime = new GuardRuntime(options.store, options.codec ?? jsonOutcomeCodec, options.onEvent);
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
  async run<T>(call: GuardedCall, body: Body<T>): Promise<T> {
    if (typeof body !== 'function') throw new TypeError('guard.run needs a body function');
    if (call === null || typeof call !== 'object') throw new TypeError('guard.run needs a call object');
    const toolProblem = nameProblem(call.tool);
    if (toolProblem !== undefined) {
      // Checked before anything else: a name no store can take must never reach a store.
      throw new KeyDerivationError(String(call.tool), `the tool name ${toolProblem}`);
    }
    const policy = this.policyOf(call.policy, call.tool);
    if (policy.kind === Idempotency.READ_ONLY) {
      const context = readOnlyContext(call, this.tenant);
      return await runWithToolCall(context, () => body(context));
    }

    const tenant = call.tenant ?? this.tenant;
    const tenantProblem = nameProblem(tenant);
    if (tenantProblem !== undefined) {
      throw new KeyDerivationError(call.tool, `the tenant ${tenantProblem}`);
    }
    const runId = call.runId;
    const key = idempotencyKey({
      tenant,
      runId,
      tool: call.tool,
      arguments: call.arguments,
      keyArguments: policy.keyArguments,
      key: policy.key,
      scope: policy.scope,
      callId: call.callId,
    });
    // An all-arguments key already commits to every argument; other keys need a fingerprint to
    // tell a reused key with other arguments (IETF Idempotency-Key draft: 422 on mismatch).
    // With the 'arguments' strategy a repeat is defined by the key arguments alone, so the key
    // serves as the fingerprint (other arguments are not compared, and need not be hashable).
    const checkFingerprint = policy.key !== 'arguments';
    const fingerprint = checkFingerprint ? argumentsFingerprint(call.arguments) : key;
    const running = currentToolCall();
    if (running !== undefined && running.idempotencyKey === key && running.tenant === tenant) {
      throw new TypeError(
        `guard.run for tool "${call.tool}" was called from inside the body of the same call ` +
          `(idempotency key ${key}): it would wait for itself. Call the tool's own function instead.`,
      );
    }
    const state: CallState = { call, policy, ref: { tenant, key }, runId, flight: undefined };
    const waitStartedMs = performance.now();

    // Identical calls in flight in this process share one claim: the first leads, the rest follow
    // it and take its recorded outcome, so N local duplicates cost the store one claim, not N.
    const flightKey = `${policy.kind}\u0000${tenant}\u0000${key}\u0000${call.tool}\u0000${fingerprint}`;
    const leader = this.flights.get(flightKey);
    if (leader !== undefined) {
      const followed = await follow<T>(this.runtime, state, leader, waitStartedMs);
      if (followed !== NO_ANSWER) return followed;
      // The leader settled without a recorded outcome (it failed, or its result went unrecorded):
      // ask the store as any caller would.
      return (await this.claimLoop<T>(state, fingerprint, checkFingerprint, body, waitStartedMs, true)).value;
    }
    const flight = new Flight(this.flights, flightKey);
    state.flight = flight;
    try {
      const answer = await this.claimLoop<T>(
        state,
        fingerprint,
        checkFingerprint,
        body,
        waitStartedMs,
        false,
      );
      flight.finish(answer.encoded === undefined ? undefined : answer);
      return answer.value;
    } catch (error) {
      flight.finish(undefined);
      throw error;
    } finally {
      flight.land();
    }
  }

  /** Claim the key and answer: run the body, wait for the holder, or return what is recorded. */
  private async claimLoop<T>(
    state: CallState,
    fingerprint: string,
    checkFingerprint: boolean,
    body: Body<T>,
    waitStartedMs: number,
    alreadyWaiting: boolean,
  ): Promise<Answer<T>> {
    const { call, policy } = state;
    const { key } = state.ref;
    let waitingEmitted = alreadyWaiting;
    const progress: CallProgress = { executions: 0, ownResult: undefined, lastAttempt: undefined };
    for (;;) {
      call.signal?.throwIfAborted();
      const owner = this.runtime.nextOwner();
      const claimOptions: ClaimOptions = {
        tool: call.tool,
        fingerprint,
        owner,
        leaseMs: policy.leaseMs,
        retentionMs: policy.retentionMs,
        mode: policy.kind === Idempotency.EFFECTFUL ? 'at-most-once' : 'at-least-once',
        maxAttempts: policy.maxAttempts,
        checkFingerprint,
      };
      let sent: SentClaim;
      try {
        sent = await this.claimOnce(state.ref, claimOptions);
      } catch (error) {
        return this.answerWhenUnreachable<T>(state, progress, error);
      }
      const { claim } = sent;
      if (claim.status === 'acquired') {
        const holder = { fence: claim.fence, owner };
        if (progress.executions > 0) {
          // Rule G1 (docs/design.md): this call already entered its body; a new life of the key
          // must not run it again on this call's behalf.
          const answer = await this.afterLostRecord<T>(state, holder, claim, progress);
          if (answer !== RUN_AGAIN) return answer;
        }
        if (call.signal?.aborted === true) {
          // Cancelled while the claim was in flight: the body never starts, so nothing is held.
          await this.runtime.releaseQuietly(state.ref, holder);
          throw call.signal.reason;
        }
        const result = await runAttempt<T>(this.runtime, state, holder, claim, sent.sentAtMs, body, progress);
        if (result !== SUPERSEDED) return result;
        continue;
      }
      if (claim.status === 'busy') {
        const own = progress.ownResult;
        if (own !== undefined && policy.kind === Idempotency.EFFECTFUL) {
          // This call's effect happened and its value is known; whoever holds the key now is a
          // second execution that the lost record let in, and waiting for it adds nothing.
          return { value: own.value as T, encoded: undefined, ...(progress.lastAttempt ?? NO_ATTEMPT) };
        }
        const waitedMs = performance.now() - waitStartedMs;
        const remainingMs = policy.waitTimeoutMs - waitedMs;
        if (remainingMs <= 0) {
          const pending = new OutcomePendingError({ key, tool: call.tool, waitedMs: Math.round(waitedMs) });
          this.runtime.emit('tool.pending', state, claim.record, { error: describeError(pending) });
          throw pending;
        }
        if (!waitingEmitted) {
          waitingEmitted = true;
          this.runtime.emit('tool.waiting', state, claim.record);
        }
        await this.runtime.storeCall(
          'waitForSettle',
          () => this.store.waitForSettle(state.ref, { timeoutMs: remainingMs, signal: call.signal }),
          call.signal,
        );
        continue;
      }
      return this.settled<T>(state, claim);
    }
  }

  /**
   * The store could not be asked who holds the key. After this call's body ran, its own value is
   * the answer when it has one, and an EFFECTFUL call without one has an unknown outcome (never
   * "store unavailable, body not run"). Otherwise the store's error is rethrown as it is.
   */
  private answerWhenUnreachable<T>(
    state: CallState,
    progress: CallProgress,
    error: unknown,
  ): never | Answer<T> {
    if (progress.executions === 0 || !StoreUnavailableError.isInstance(error)) throw error;
    const own = progress.ownResult;
    if (own !== undefined) {
      return { value: own.value as T, encoded: undefined, ...(progress.lastAttempt ?? NO_ATTEMPT) };
    }
    if (state.policy.kind !== Idempotency.EFFECTFUL) throw error;
    const reason = describeError(error);
    throw indeterminateOutcomeError(
      state.ref.key,
      state.call.tool,
      progress.lastAttempt ?? NO_ATTEMPT,
      reason,
      {
        cause: error,
      },
    );
  }

  /**
   * Rule G1: a claim `acquired` by a call that already entered its body is a new life of the key
   * (the record was released, forgotten, expired or lost by the store). The body is not run
   * again for EFFECTFUL; a known value is recorded in the new life; IDEMPOTENT may run again only
   * while this call's own executions stay below `maxAttempts`.
   */
  private async afterLostRecord<T>(
    state: CallState,
    holder: Holder,
    claim: Extract<ClaimResult, { status: 'acquired' }>,
    progress: CallProgress,
  ): Promise<Answer<T> | typeof RUN_AGAIN> {
    const { ref, policy, call } = state;
    const attemptInfo = { attempt: claim.attempt, fence: claim.fence };
    const own = progress.ownResult;
    if (own !== undefined) {
      let result: CompleteResult | undefined;
      try {
        result = await completeWithRetry(this.runtime, ref, holder, own.encoded, policy.retentionMs);
      } catch {
        result = undefined;
      }
      const recorded = result !== undefined && isRecorded(result, holder, own.encoded);
      this.runtime.emit('tool.completed', state, attemptInfo, { recorded });
      return { value: own.value as T, encoded: recorded ? own.encoded : undefined, ...attemptInfo };
    }
    if (policy.kind === Idempotency.EFFECTFUL) {
      throw await this.runtime.markIndeterminate(state, holder, recordLost(), 0, attemptInfo);
    }
    if (progress.executions >= policy.maxAttempts) {
      await this.runtime.releaseQuietly(ref, holder);
      const error = new ExecutionAbandonedError({
        key: ref.key,
        tool: call.tool,
        attempt: progress.executions,
        fence: claim.fence,
      });
      this.runtime.emit('tool.abandoned', state, attemptInfo, { error: describeError(recordLost()) });
      throw error;
    }
    return RUN_AGAIN;
  }

  /**
   * Operator: settle an `indeterminate` or `abandoned` record after checking the system the tool
   * touched. `{ outcome }` records what happened (repeats will get it); `{ released: true }` frees
   * the key so the call may run again.
   * @throws StoreUnavailableError
   */
  async resolve(
    key: string,
    resolution: OperatorResolution,
    options: { tenant?: string; retentionMs?: number } = {},
  ): Promise<ResolveResult> {
    const ref = { tenant: options.tenant ?? this.tenant, key };
    const retentionMs =
      options.retentionMs ?? this.policyOf({ kind: Idempotency.IDEMPOTENT }, '').retentionMs;
    const released =
      resolution !== null && typeof resolution === 'object' && Object.hasOwn(resolution, 'released');
    const withOutcome =
      resolution !== null && typeof resolution === 'object' && Object.hasOwn(resolution, 'outcome');
    if (released === withOutcome || (released && (resolution as { released: unknown }).released !== true)) {
      throw new TypeError(
        'guard.resolve needs either { outcome } (it happened) or { released: true } (it did not)',
      );
    }
    const storeResolution = released
      ? ({ released: true } as const)
      : { outcome: this.runtime.encodeOutcome((resolution as { outcome: unknown }).outcome, undefined) };
    return this.runtime.storeCall('resolve', () => this.store.resolve(ref, storeResolution, retentionMs));
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

  /**
   * One claim. A claim whose reply was lost may have taken effect in the store: asking once more
   * with the SAME owner is answered `acquired` by the store if it did, instead of leaving an orphan
   * claim that would later read as a lost (indeterminate) attempt.
   */
  private async claimOnce(ref: RecordRef, options: ClaimOptions): Promise<SentClaim> {
    let sentAtMs = performance.now();
    try {
      return { claim: await this.store.claim(ref, options), sentAtMs };
    } catch (first) {
      if (ToolfenceError.isInstance(first) && !StoreUnavailableError.isInstance(first)) throw first;
      await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_DELAY_MS));
      // The lease a resent claim restarts is counted from when it was resent.
      sentAtMs = performance.now();
      try {
        return { claim: await this.store.claim(ref, options), sentAtMs };
      } catch (error) {
        throw asStoreError('claim', error);
      }
    }
  }

  /** Answer a claim that found the record settled (or in conflict). */
  private settled<T>(
    state: CallState,
    claim: Exclude<ClaimResult, { status: 'acquired' | 'busy' }>,
  ): Answer<T> {
    const { record } = claim;
    const { key } = state.ref;
    const tool = state.call.tool;
    switch (claim.status) {
      case 'completed': {
        const encoded = record.outcome ?? '';
        const value = this.runtime.decodeOutcome(encoded, tool) as T;
        this.runtime.emit('tool.deduplicated', state, record);
        return { value, encoded, attempt: record.attempt, fence: record.fence };
      }
      case 'conflict':
        throw new IdempotencyConflictError(key, tool, record.tool);
      case 'indeterminate': {
        const error = record.error ?? { type: 'Unknown', message: 'no reason recorded' };
        this.runtime.emit('tool.indeterminate', state, record, { error });
        throw indeterminateOutcomeError(key, tool, record, error);
      }
      case 'abandoned':
        this.runtime.emit('tool.abandoned', state, record, { error: record.error });
        throw new ExecutionAbandonedError({ key, tool, attempt: record.attempt, fence: record.fence });
    }
  }
}

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
