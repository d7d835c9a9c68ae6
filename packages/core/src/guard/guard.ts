import { randomUUID } from 'node:crypto';
import { jsonOutcomeCodec, type OutcomeCodec } from '../codec/outcome-codec.js';
import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IdempotencyConflictError } from '../errors/idempotency-conflict-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { LeaseLostError } from '../errors/lease-lost-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import { OutcomePendingError } from '../errors/outcome-pending-error.js';
import { PolicyError } from '../errors/policy-error.js';
import { StoreUnavailableError } from '../errors/store-unavailable-error.js';
import { ToolTimeoutError } from '../errors/tool-timeout-error.js';
import { ToolfenceError } from '../errors/toolfence-error.js';
import {
  argumentsFingerprint,
  idempotencyKey,
  type KeySecret,
  keySecretProblem,
} from '../key/idempotency-key.js';
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
  RecordedError,
  RecordRef,
  ResolveResult,
} from '../store/idempotency-store.js';
import { isWellFormedText, MAX_OUTCOME_LENGTH, nameProblem } from '../store/store-input.js';
import { currentToolCall, runWithToolCall, type ToolCallContext } from './call-context.js';
import type { GuardEvent, GuardEventListener, GuardEventType } from './guard-events.js';
import { LeaseKeeper, type LeaseLossReason } from './lease-keeper.js';

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
   * Rotating it changes every key: records under the old secret are not found and age out within
   * the retention window (docs/key-spec.md, "Keyed mode"). Default: none (plain SHA-256).
   * @throws PolicyError (from the constructor) when it is shorter than 32 bytes or not a secret.
   */
  readonly keySecret?: KeySecret;
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

interface CallState {
  readonly call: GuardedCall;
  readonly policy: ResolvedPolicy;
  readonly ref: RecordRef;
  readonly runId: string | undefined;
  /** Sends the followers of this call to the store (its lease is lost: it no longer leads). */
  releaseFollowers?: () => void;
}

/**
 * The body `guard.run` runs at most once: it gets the call's context and returns the outcome
 * (or a promise of it). Exported as `GuardedBody`.
 */
export type Body<T> = (context: ToolCallContext) => T | PromiseLike<T>;

/** Pause before asking the store again for a claim whose reply was lost. */
const CLAIM_RETRY_DELAY_MS = 25;

/** Sentinel: the attempt lost its lease; the caller must take the current holder's answer. */
const SUPERSEDED = Symbol('superseded');

/** Sentinel: a call that ran its body before may run it again (IDEMPOTENT, below maxAttempts). */
const RUN_AGAIN = Symbol('run again');

/** Renewals tried when claim replies keep arriving after the lease view lapsed (rule G2). */
const LATE_REPLY_ROUNDS = 3;

/** What one guard.run call has done so far, across its claims (rule G1). */
interface CallProgress {
  /** Bodies this call has entered. */
  executions: number;
  /** The value this call's body returned and its encoding, once it returned one. */
  ownResult: { readonly value: unknown; readonly encoded: string } | undefined;
  /** Attempt and fence of the last attempt that entered the body. */
  lastAttempt: { readonly attempt: number; readonly fence: number } | undefined;
}

/** A claim's answer and when (monotonic ms) the request that got it was sent. */
interface SentClaim {
  readonly claim: ClaimResult;
  readonly sentAtMs: number;
}

/** The reason recorded when an attempt that entered its body finds its record gone. */
function recordLost(): Error {
  const error = new Error(
    'the record of an attempt that had entered its body was lost (released, forgotten, expired or ' +
      'lost by the store) before its outcome was recorded; the effect may have happened',
  );
  error.name = 'RecordLost';
  return error;
}

/** Sentinel: a followed leader settled without a recorded outcome. */
const NO_ANSWER = Symbol('no answer');

/** Attempt details of an event that concerns no known attempt. */
const NO_ATTEMPT = { attempt: 0, fence: 0 } as const;

/** What a call answered, with the encoded outcome when one is recorded in the store. */
interface Answer<T> {
  readonly value: T;
  /** The outcome as recorded; undefined when nothing was recorded for this answer. */
  readonly encoded: string | undefined;
  readonly attempt: number;
  readonly fence: number;
}

/**
 * An identical call in flight in this process, which later identical calls follow. The promise is
 * made only when a first follower arrives: a call nobody follows allocates nothing for it.
 */
class Flight {
  private promise: Promise<Answer<unknown> | undefined> | undefined;
  private resolvePromise: ((answer: Answer<unknown> | undefined) => void) | undefined;
  private settled = false;
  private answer: Answer<unknown> | undefined;

  get done(): Promise<Answer<unknown> | undefined> {
    if (this.settled) return Promise.resolve(this.answer);
    this.promise ??= new Promise((resolve) => {
      this.resolvePromise = resolve;
    });
    return this.promise;
  }

  finish(answer: Answer<unknown> | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.answer = answer;
    this.resolvePromise?.(answer);
  }
}

/**
 * The dispatcher: for each guarded call derives the idempotency key, claims it in the store, and
 * runs the body at most once per key (docs/design.md and docs/guarantee.md in the repository):
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
  private readonly onEvent: GuardEventListener | undefined;
  private readonly codec: OutcomeCodec;
  private readonly keySecret: KeySecret | undefined;
  private readonly resolved = new WeakMap<IdempotencyPolicy, ResolvedPolicy>();
  private readonly flights = new Map<string, Flight>();
  private readonly instanceId = randomUUID();
  private attemptCounter = 0;

  /** @throws PolicyError when `defaults` are invalid. */
  constructor(options: GuardOptions) {
    if (options?.store === undefined) throw new TypeError('Guard needs a store');
    const tenant = options.tenant ?? 'default';
    const tenantProblem = nameProblem(tenant);
    if (tenantProblem !== undefined) throw new TypeError(`Guard tenant ${tenantProblem}`);
    this.store = options.store;
    this.tenant = tenant;
    this.defaults = options.defaults ?? {};
    this.onEvent = options.onEvent;
    this.codec = options.codec ?? jsonOutcomeCodec;
    if (Object.hasOwn(options, 'keySecret')) {
      // An explicit undefined is refused too: an unset environment variable must not quietly
      // switch keyed mode off.
      const problem = keySecretProblem(options.keySecret);
      if (problem !== undefined) throw new PolicyError('keySecret', problem);
    }
    this.keySecret = options.keySecret;
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
      secret: this.keySecret,
    });
    // An all-arguments key already commits to every argument; other keys need a fingerprint to
    // tell a reused key with other arguments (IETF Idempotency-Key draft: 422 on mismatch).
    // With the 'arguments' strategy a repeat is defined by the key arguments alone, so the key
    // serves as the fingerprint (other arguments are not compared, and need not be hashable).
    const checkFingerprint = policy.key !== 'arguments';
    const fingerprint = checkFingerprint ? this.fingerprintOf(call) : key;
    const running = currentToolCall();
    if (running !== undefined && running.idempotencyKey === key && running.tenant === tenant) {
      throw new TypeError(
        `guard.run for tool "${call.tool}" was called from inside the body of the same call ` +
          `(idempotency key ${key}): it would wait for itself. Call the tool's own function instead.`,
      );
    }
    const state: CallState = { call, policy, ref: { tenant, key }, runId };
    const waitStartedMs = performance.now();

    // Identical calls in flight in this process share one claim: the first leads, the rest follow
    // it and take its recorded outcome, so N local duplicates cost the store one claim, not N.
    const flightKey = `${policy.kind}\u0000${tenant}\u0000${key}\u0000${call.tool}\u0000${fingerprint}`;
    const leader = this.flights.get(flightKey);
    if (leader !== undefined) {
      const followed = await this.follow<T>(state, leader, waitStartedMs);
      if (followed !== NO_ANSWER) return followed;
      // The leader settled without a recorded outcome (it failed, or its result went unrecorded):
      // ask the store as any caller would.
      return (await this.claimLoop<T>(state, fingerprint, checkFingerprint, body, waitStartedMs, true)).value;
    }
    const flight = new Flight();
    this.flights.set(flightKey, flight);
    state.releaseFollowers = () => {
      if (this.flights.get(flightKey) === flight) this.flights.delete(flightKey);
      flight.finish(undefined);
    };
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
      if (this.flights.get(flightKey) === flight) this.flights.delete(flightKey);
    }
  }

  /** Wait for the leader of an identical in-flight call; NO_ANSWER when it recorded no outcome. */
  private async follow<T>(
    state: CallState,
    leader: Flight,
    waitStartedMs: number,
  ): Promise<T | typeof NO_ANSWER> {
    const { call, policy } = state;
    this.emit('tool.waiting', state, NO_ATTEMPT);
    const remainingMs = policy.waitTimeoutMs - (performance.now() - waitStartedMs);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    try {
      const answer = await Promise.race([
        leader.done,
        new Promise<'timeout'>((resolve, reject) => {
          timer = setTimeout(() => resolve('timeout'), Math.max(0, remainingMs));
          if (call.signal !== undefined) {
            call.signal.throwIfAborted();
            onAbort = () => reject(call.signal?.reason);
            call.signal.addEventListener('abort', onAbort, { once: true });
          }
        }),
      ]);
      if (answer === 'timeout') {
        const pending = new OutcomePendingError({
          key: state.ref.key,
          tool: call.tool,
          waitedMs: Math.round(performance.now() - waitStartedMs),
        });
        this.emit('tool.pending', state, NO_ATTEMPT, { error: describeError(pending) });
        throw pending;
      }
      if (answer === undefined || answer.encoded === undefined) return NO_ANSWER;
      this.emit('tool.deduplicated', state, answer);
      // Each follower decodes its own copy: no two callers share a mutable result.
      return this.codec.decode(answer.encoded) as T;
    } finally {
      clearTimeout(timer);
      if (onAbort !== undefined) call.signal?.removeEventListener('abort', onAbort);
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
      const owner = `${this.instanceId}:${++this.attemptCounter}`;
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
          await this.releaseQuietly(state.ref, holder);
          throw call.signal.reason;
        }
        const result = await this.execute<T>(state, holder, claim, sent.sentAtMs, body, progress);
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
          this.emit('tool.pending', state, claim.record, { error: describeError(pending) });
          throw pending;
        }
        if (!waitingEmitted) {
          waitingEmitted = true;
          this.emit('tool.waiting', state, claim.record);
        }
        await this.storeCall(
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
    throw new IndeterminateOutcomeError(
      {
        key: state.ref.key,
        tool: state.call.tool,
        ...(progress.lastAttempt ?? NO_ATTEMPT),
        reasonType: reason.type,
        reason: reason.message,
      },
      { cause: error },
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
        result = await this.completeWithRetry(ref, holder, own.encoded, policy.retentionMs);
      } catch {
        result = undefined;
      }
      const recorded =
        result !== undefined &&
        (result.status === 'completed' ||
          (result.status === 'stale' && isOwnCompletion(result.record, holder, own.encoded)));
      this.emit('tool.completed', state, attemptInfo, { recorded });
      return { value: own.value as T, encoded: recorded ? own.encoded : undefined, ...attemptInfo };
    }
    if (policy.kind === Idempotency.EFFECTFUL) {
      throw await this.markIndeterminate(state, holder, recordLost(), 0, attemptInfo);
    }
    if (progress.executions >= policy.maxAttempts) {
      await this.releaseQuietly(ref, holder);
      const error = new ExecutionAbandonedError({
        key: ref.key,
        tool: call.tool,
        attempt: progress.executions,
        fence: claim.fence,
      });
      this.emit('tool.abandoned', state, attemptInfo, { error: describeError(recordLost()) });
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
      : { outcome: this.encodeOutcome((resolution as { outcome: unknown }).outcome, undefined) };
    return this.storeCall('resolve', () => this.store.resolve(ref, storeResolution, retentionMs));
  }

  /** Operator: read the record of a key (null when absent). @throws StoreUnavailableError */
  async inspect(key: string, options: { tenant?: string } = {}): Promise<IdempotencyRecord | null> {
    const ref = { tenant: options.tenant ?? this.tenant, key };
    return this.storeCall('get', () => this.store.get(ref));
  }

  /** The fingerprint of every argument; a value that cannot be read is a KeyDerivationError. */
  private fingerprintOf(call: GuardedCall): string {
    try {
      return argumentsFingerprint(call.arguments, { secret: this.keySecret });
    } catch (error) {
      if (!CanonicalizationError.isInstance(error)) throw error;
      throw new KeyDerivationError(call.tool, `the arguments cannot be fingerprinted: ${error.message}`, {
        cause: error,
      });
    }
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
        const value = this.decodeOutcome(encoded, tool) as T;
        this.emit('tool.deduplicated', state, record);
        return { value, encoded, attempt: record.attempt, fence: record.fence };
      }
      case 'conflict':
        throw new IdempotencyConflictError(key, tool, record.tool);
      case 'indeterminate': {
        const error = record.error ?? { type: 'Unknown', message: 'no reason recorded' };
        this.emit('tool.indeterminate', state, record, { error });
        throw new IndeterminateOutcomeError({
          key,
          tool,
          attempt: record.attempt,
          fence: record.fence,
          reasonType: error.type,
          reason: error.message,
        });
      }
      case 'abandoned':
        this.emit('tool.abandoned', state, record, { error: record.error });
        throw new ExecutionAbandonedError({ key, tool, attempt: record.attempt, fence: record.fence });
    }
  }

  /**
   * Rule G2: the body is entered only while this worker's view of its lease is live, counted
   * from when the claim was SENT. A reply that arrives after that view lapsed is checked with a
   * renewal first. Returns when the lease view starts (monotonic ms), or SUPERSEDED when the
   * claim was lost before the body was entered (the caller then asks as a fresh caller).
   */
  private async confirmLease(
    state: CallState,
    holder: Holder,
    sentAtMs: number,
  ): Promise<number | typeof SUPERSEDED> {
    const { ref, policy } = state;
    let leaseFromMs = sentAtMs;
    for (let round = 0; performance.now() >= leaseFromMs + policy.leaseMs; round++) {
      if (round === LATE_REPLY_ROUNDS) {
        await this.releaseQuietly(ref, holder);
        throw new StoreUnavailableError(
          'claim',
          `the store answered later than the lease (${policy.leaseMs} ms) ${LATE_REPLY_ROUNDS} times; the body was not started`,
        );
      }
      const renewSentAtMs = performance.now();
      let renewed: Awaited<ReturnType<IdempotencyStore['renew']>>;
      try {
        renewed = await this.store.renew(ref, holder, policy.leaseMs);
      } catch (error) {
        await this.releaseQuietly(ref, holder);
        throw asStoreError('renew', error);
      }
      if (renewed.status !== 'renewed') return SUPERSEDED;
      leaseFromMs = renewSentAtMs;
    }
    return leaseFromMs;
  }

  /** Run the body as the holder; record or handle its result. */
  private async execute<T>(
    state: CallState,
    holder: Holder,
    claim: Extract<ClaimResult, { status: 'acquired' }>,
    claimSentAtMs: number,
    body: Body<T>,
    progress: CallProgress,
  ): Promise<Answer<T> | typeof SUPERSEDED> {
    const { call, policy, ref } = state;
    const attemptInfo = { attempt: claim.attempt, fence: claim.fence };
    const leaseFromMs = await this.confirmLease(state, holder, claimSentAtMs);
    if (leaseFromMs === SUPERSEDED) return SUPERSEDED;
    // The body's signal is made only when the body reads it (an AbortSignal is costly to make):
    // an abort before that is remembered and applied when it is made.
    const aborter = new LazyAborter(call.signal);
    let leaseLost: LeaseLostError | undefined;
    let interruption: { readonly kind: 'timeout' | 'abort'; readonly error: unknown } | undefined;
    let timeoutTimer: NodeJS.Timeout | undefined;
    let keeper: LeaseKeeper | undefined;
    let bodyPromise: Promise<T>;
    let bodySettled = false;
    let onCallerAbort: (() => void) | undefined;
    const startedMs = performance.now();

    // Interruptions the caller is answered at once for: a timeout and the caller's own abort
    // (rule G4); a lost lease after a grace of waitTimeoutMs for the body to notice its signal.
    let interrupt!: (reason: 'interrupted' | 'lease') => void;
    const interrupted = new Promise<'interrupted' | 'lease'>((resolve) => {
      interrupt = resolve;
    });
    const stopWatching = () => {
      clearTimeout(timeoutTimer);
      if (onCallerAbort !== undefined) call.signal?.removeEventListener('abort', onCallerAbort);
    };

    try {
      keeper = new LeaseKeeper(
        this.store,
        ref,
        holder,
        policy.leaseMs,
        policy.heartbeatMs,
        (reason) => {
          // Once the body settled, the store's answer to complete/release decides what happened.
          if (bodySettled) return;
          leaseLost = leaseLostError(ref.key, call.tool, holder.fence, reason);
          state.releaseFollowers?.();
          this.emit('tool.fenced', state, attemptInfo, { error: describeError(leaseLost) });
          aborter.abort(leaseLost);
          const grace = setTimeout(() => interrupt('lease'), policy.waitTimeoutMs);
          grace.unref();
        },
        leaseFromMs,
      );
      if (policy.timeoutMs !== undefined) {
        timeoutTimer = setTimeout(() => {
          const error = new ToolTimeoutError(call.tool, policy.timeoutMs as number);
          interruption ??= { kind: 'timeout', error };
          aborter.abort(error);
          interrupt('interrupted');
        }, policy.timeoutMs);
      }
      const callerSignal = call.signal;
      if (callerSignal !== undefined) {
        onCallerAbort = () => {
          interruption ??= { kind: 'abort', error: callerSignal.reason };
          interrupt('interrupted');
        };
        callerSignal.addEventListener('abort', onCallerAbort, { once: true });
      }
      const context: ToolCallContext = {
        idempotencyKey: ref.key,
        attempt: claim.attempt,
        fence: claim.fence,
        get signal() {
          return aborter.signal;
        },
        tenant: ref.tenant,
        runId: state.runId,
        callId: call.callId,
        tool: call.tool,
      };
      this.emit('tool.started', state, attemptInfo, { takeover: claim.takeover });
      progress.executions++;
      progress.lastAttempt = attemptInfo;
      bodyPromise = Promise.resolve().then(() => runWithToolCall(context, () => body(context)));
    } catch (error) {
      // Failed before the body could start: never leave the claim behind.
      keeper?.stop();
      stopWatching();
      await this.store.release(ref, holder).catch(() => undefined);
      throw error;
    }

    type Settlement =
      | { ok: true; value: T }
      | { ok: false; error: unknown }
      | { interrupted: 'interrupted' | 'lease' };
    const settlement: Settlement = await Promise.race([
      bodyPromise.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
      interrupted.then((reason) => ({ interrupted: reason })),
    ]);
    stopWatching();
    bodySettled = !('interrupted' in settlement) || settlement.interrupted === 'lease';
    const durationMs = Math.round(performance.now() - startedMs);
    // The lease is kept (renewed) until the outcome is recorded or the claim given up: a slow
    // store must not let another worker take over a call that already ran.
    let keepLease = false;
    try {
      if ('interrupted' in settlement) {
        if (settlement.interrupted === 'lease') {
          // The body ignored its signal past the grace period: record late if it ever returns,
          // and answer this caller with the current holder's outcome.
          this.recordLate(state, holder, bodyPromise, attemptInfo);
          return SUPERSEDED;
        }
        keepLease = true;
        throw this.answerInterruption(
          state,
          holder,
          bodyPromise,
          attemptInfo,
          keeper,
          interruption,
          durationMs,
        );
      }

      if (settlement.ok) {
        return await this.record(state, holder, settlement.value, durationMs, attemptInfo, progress);
      }

      const error = settlement.error;
      if (leaseLost !== undefined && error === leaseLost) {
        // The body honoured the lost lease: the current holder's answer is this caller's answer.
        return SUPERSEDED;
      }
      if (policy.kind === Idempotency.IDEMPOTENT || safeNoEffect(policy, error)) {
        this.emit('tool.failed', state, attemptInfo, { error: describeError(error), durationMs });
        const released = await this.releaseQuietly(ref, holder);
        if (!released && leaseLost !== undefined) return SUPERSEDED;
        throw error;
      }
      throw await this.markIndeterminate(state, holder, error, durationMs, attemptInfo);
    } finally {
      if (!keepLease) keeper.stop();
    }
  }

  /**
   * Rule G4: a timeout or the caller's abort while the body runs is answered at once. The claim is
   * kept (and renewed) until the body settles and is then settled as usual, so a retry waits and
   * replays instead of running beside it. EFFECTFUL: unknown to this caller; if the body has not
   * settled `waitTimeoutMs` later the record is marked indeterminate (a late value still completes
   * it). Returns the error to throw.
   */
  private answerInterruption<T>(
    state: CallState,
    holder: Holder,
    bodyPromise: Promise<T>,
    attemptInfo: { attempt: number; fence: number },
    keeper: LeaseKeeper,
    interruption: { readonly kind: 'timeout' | 'abort'; readonly error: unknown } | undefined,
    durationMs: number,
  ): unknown {
    const { policy, ref, call } = state;
    const cause = interruption?.error;
    const recordedCause = describeError(cause);
    let settledInTime = false;
    let grace: NodeJS.Timeout | undefined;
    if (policy.kind === Idempotency.EFFECTFUL) {
      grace = setTimeout(() => {
        if (settledInTime) return;
        void this.store
          .markIndeterminate(ref, holder, recordedCause, policy.retentionMs)
          .catch(() => undefined)
          .finally(() => keeper.stop());
      }, policy.waitTimeoutMs);
      grace.unref();
    }
    bodyPromise
      .then(
        async (value) => {
          settledInTime = true;
          clearTimeout(grace);
          const encoded = this.encodeOutcome(value, call.tool);
          const result = await this.store.complete(ref, holder, encoded, policy.retentionMs);
          const recorded =
            result.status === 'completed' ||
            (result.status === 'stale' && isOwnCompletion(result.record, holder, encoded));
          this.emit(
            recorded ? 'tool.completed' : 'tool.stale_result',
            state,
            attemptInfo,
            recorded ? { recorded } : {},
          );
        },
        async (error: unknown) => {
          settledInTime = true;
          clearTimeout(grace);
          if (policy.kind === Idempotency.IDEMPOTENT || safeNoEffect(policy, error)) {
            await this.releaseQuietly(ref, holder);
          } else {
            await this.store.markIndeterminate(ref, holder, describeError(error), policy.retentionMs);
          }
        },
      )
      .catch(async () => {
        // Unrecordable (the codec or the store refused it): settle the way the kind requires.
        if (policy.kind === Idempotency.EFFECTFUL) {
          await this.store
            .markIndeterminate(ref, holder, recordedCause, policy.retentionMs)
            .catch(() => undefined);
        } else {
          await this.releaseQuietly(ref, holder);
        }
      })
      .finally(() => keeper.stop());

    if (policy.kind === Idempotency.IDEMPOTENT) {
      this.emit('tool.failed', state, attemptInfo, { error: recordedCause, durationMs });
      return cause;
    }
    this.emit('tool.indeterminate', state, attemptInfo, { error: recordedCause, durationMs });
    return new IndeterminateOutcomeError(
      {
        key: ref.key,
        tool: call.tool,
        attempt: attemptInfo.attempt,
        fence: attemptInfo.fence,
        reasonType: recordedCause.type,
        reason: recordedCause.message,
      },
      { cause },
    );
  }

  /** Record a successful body's value under its holder. */
  private async record<T>(
    state: CallState,
    holder: Holder,
    value: T,
    durationMs: number,
    attemptInfo: { attempt: number; fence: number },
    progress: CallProgress,
  ): Promise<Answer<T> | typeof SUPERSEDED> {
    const { ref, policy } = state;
    let encoded: string;
    let result: CompleteResult;
    try {
      encoded = this.encodeOutcome(value, state.call.tool);
      result = await this.completeWithRetry(ref, holder, encoded, policy.retentionMs);
    } catch (error) {
      if (StoreUnavailableError.isInstance(error) || !ToolfenceError.isInstance(error)) {
        // Unrecorded: the lease will expire and the record turn indeterminate (EFFECTFUL) or be
        // re-run (IDEMPOTENT). This caller knows the answer, so it gets it.
        this.emit('tool.completed', state, attemptInfo, { durationMs, recorded: false });
        return { value, encoded: undefined, ...attemptInfo };
      }
      // Rule G5: no store can hold this outcome (the codec failed, or the store refused it).
      // Settle at once the way the kind requires; never leave it to the lease.
      if (policy.kind === Idempotency.EFFECTFUL) {
        throw await this.markIndeterminate(state, holder, error, durationMs, attemptInfo);
      }
      this.emit('tool.failed', state, attemptInfo, { error: describeError(error), durationMs });
      await this.releaseQuietly(ref, holder);
      throw error;
    }
    if (
      result.status === 'completed' ||
      (result.status === 'stale' && isOwnCompletion(result.record, holder, encoded))
    ) {
      // A retried complete whose first try was applied (its reply lost) finds its own outcome.
      this.emit('tool.completed', state, attemptInfo, { durationMs, recorded: true });
      return { value, encoded, ...attemptInfo };
    }
    // Superseded (taken over, settled by someone else) or gone (released, forgotten, expired, lost
    // by the store). Rule G1: the caller asks the store again, and never runs the body again;
    // the value it knows is recorded in a new life if the key is free.
    this.emit('tool.stale_result', state, attemptInfo, { durationMs });
    progress.ownResult = { value, encoded };
    return SUPERSEDED;
  }

  /** Complete, retried on an outage (never on a refusal: StoreInputError and the like). */
  private async completeWithRetry(ref: RecordRef, holder: Holder, encoded: string, retentionMs: number) {
    let lastError: unknown;
    for (const delayMs of [0, 50, 250]) {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      try {
        return await this.store.complete(ref, holder, encoded, retentionMs);
      } catch (error) {
        if (ToolfenceError.isInstance(error) && !StoreUnavailableError.isInstance(error)) throw error;
        lastError = error;
      }
    }
    throw asStoreError('complete', lastError);
  }

  /** Encode with the codec; any failure is an {@link OutcomeEncodingError}. */
  private encodeOutcome(value: unknown, tool: string | undefined): string {
    let encoded: unknown;
    try {
      encoded = this.codec.encode(value);
    } catch (error) {
      throw new OutcomeEncodingError('encode', describeError(error).message, { tool, cause: error });
    }
    if (typeof encoded !== 'string') {
      throw new OutcomeEncodingError('encode', `the codec returned a ${typeof encoded}, not a string`, {
        tool,
      });
    }
    if (encoded.length > MAX_OUTCOME_LENGTH || !isWellFormedText(encoded)) {
      throw new OutcomeEncodingError(
        'encode',
        encoded.length > MAX_OUTCOME_LENGTH
          ? `the encoded outcome has ${encoded.length} characters, more than ${MAX_OUTCOME_LENGTH}`
          : 'the codec returned a string with a lone surrogate, which no store can keep byte for byte',
        { tool },
      );
    }
    return encoded;
  }

  /** Decode a recorded outcome; any failure is an {@link OutcomeEncodingError}. */
  private decodeOutcome(encoded: string, tool: string): unknown {
    try {
      return this.codec.decode(encoded);
    } catch (error) {
      throw new OutcomeEncodingError('decode', describeError(error).message, { tool, cause: error });
    }
  }

  /** A superseded attempt that still returns: try to record it; a stale one is reported. */
  private recordLate<T>(
    state: CallState,
    holder: Holder,
    bodyPromise: Promise<T>,
    attemptInfo: { attempt: number; fence: number },
  ): void {
    bodyPromise.then(
      async (value) => {
        try {
          const result = await this.store.complete(
            state.ref,
            holder,
            this.encodeOutcome(value, state.call.tool),
            state.policy.retentionMs,
          );
          if (result.status === 'completed') {
            this.emit('tool.completed', state, attemptInfo, { recorded: true });
          } else {
            this.emit('tool.stale_result', state, attemptInfo);
          }
        } catch {
          // Nothing more can be done for a late result the store will not take.
        }
      },
      () => undefined,
    );
  }

  private async markIndeterminate(
    state: CallState,
    holder: Holder,
    error: unknown,
    durationMs: number,
    attemptInfo: { attempt: number; fence: number },
  ): Promise<IndeterminateOutcomeError> {
    const recorded = describeError(error);
    try {
      await this.store.markIndeterminate(state.ref, holder, recorded, state.policy.retentionMs);
    } catch {
      // The claim stays in progress; when its lease expires a claimer marks it indeterminate.
    }
    this.emit('tool.indeterminate', state, attemptInfo, { error: recorded, durationMs });
    return new IndeterminateOutcomeError(
      {
        key: state.ref.key,
        tool: state.call.tool,
        attempt: attemptInfo.attempt,
        fence: attemptInfo.fence,
        reasonType: recorded.type,
        reason: recorded.message,
      },
      { cause: error },
    );
  }

  /** Release; true when this holder's claim was released. */
  private async releaseQuietly(ref: RecordRef, holder: Holder): Promise<boolean> {
    try {
      return (await this.store.release(ref, holder)).status === 'released';
    } catch {
      // Unreleased: the lease expires and the key is taken over as a lost attempt.
      return false;
    }
  }

  private async storeCall<R>(operation: string, fn: () => Promise<R>, signal?: AbortSignal): Promise<R> {
    try {
      return await fn();
    } catch (error) {
      // The caller's own cancellation is not a store failure.
      if (signal?.aborted === true && error === signal.reason) throw error;
      throw asStoreError(operation, error);
    }
  }

  private emit(
    type: GuardEventType,
    state: CallState,
    attempt: { attempt: number; fence: number },
    extra: Partial<GuardEvent> = {},
  ): void {
    if (this.onEvent === undefined) return;
    const event: GuardEvent = {
      type,
      key: state.ref.key,
      tool: state.call.tool,
      tenant: state.ref.tenant,
      runId: state.runId,
      callId: state.call.callId,
      attempt: attempt.attempt,
      fence: attempt.fence,
      timeMs: Date.now(),
      ...extra,
    };
    try {
      const returned: unknown = this.onEvent(event);
      // An async listener's rejection must not become an unhandled rejection either.
      if (
        returned !== null &&
        typeof returned === 'object' &&
        typeof (returned as PromiseLike<unknown>).then === 'function'
      ) {
        (returned as PromiseLike<unknown>).then(undefined, () => undefined);
      }
    } catch {
      // A listener must not change the outcome of a call.
    }
  }
}

/** An abort signal made on first use, that still carries an abort that came before. */
class LazyAborter {
  private controller: AbortController | undefined;
  private combined: AbortSignal | undefined;
  private aborted = false;
  private reason: unknown;

  constructor(private readonly callerSignal: AbortSignal | undefined) {}

  get signal(): AbortSignal {
    if (this.combined === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
      this.combined =
        this.callerSignal === undefined
          ? this.controller.signal
          : AbortSignal.any([this.controller.signal, this.callerSignal]);
    }
    return this.combined;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
  }
}

/** A store's error as the guard reports it: toolfence errors as they are, others as unavailable. */
function asStoreError(operation: string, error: unknown): unknown {
  if (ToolfenceError.isInstance(error)) return error;
  return new StoreUnavailableError(operation, describeError(error).message, { cause: error });
}

/**
 * A complete answered `stale` that this holder's own earlier try applied (its reply was lost).
 * The outcome must match too: an operator who resolved this holder's indeterminate record
 * recorded another outcome under the same fence and owner (found by the spin model).
 */
function isOwnCompletion(record: IdempotencyRecord, holder: Holder, encoded: string): boolean {
  return (
    record.state === 'completed' &&
    record.fence === holder.fence &&
    record.owner === holder.owner &&
    record.outcome === encoded
  );
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

function safeNoEffect(policy: ResolvedPolicy, error: unknown): boolean {
  if (policy.kind !== Idempotency.EFFECTFUL) return false;
  try {
    return policy.isNoEffectError(error) === true;
  } catch {
    // A predicate that throws cannot vouch for "no effect": stay conservative.
    return false;
  }
}

function describeError(error: unknown): RecordedError {
  // Never throws: a body may throw anything (a null-prototype object, a revoked proxy, an error
  // whose message getter throws), and a failure here must not strand the claim.
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

function leaseLostError(key: string, tool: string, fence: number, reason: LeaseLossReason): LeaseLostError {
  const detail =
    reason.kind === 'expired'
      ? 'the store could not be reached to renew it before it expired'
      : reason.detail === 'stale'
        ? 'another worker took the call over with a higher fencing token'
        : reason.detail === 'settled'
          ? 'the record was settled by someone else'
          : 'the record no longer exists';
  return new LeaseLostError(
    { key, tool, fence, reason: detail },
    reason.kind === 'expired' ? { cause: reason.error } : undefined,
  );
}
