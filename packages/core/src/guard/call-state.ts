import { CanonicalizationError } from '../errors/canonicalization-error.js';
import { KeyDerivationError } from '../errors/key-derivation-error.js';
import { argumentsFingerprint, idempotencyKey, type KeySecret } from '../key/idempotency-key.js';
import type { ResolvedPolicy } from '../policy/idempotency-policy.js';
import type { RecordRef } from '../store/idempotency-store.js';
import { currentToolCall } from './call-context.js';
import { describeCall } from './call-description.js';
import type { Flight } from './flight.js';
import type { CallObserver, GuardedCall } from './guard-types.js';
import { cachedNameProblem } from './name-check.js';

// One call as the parts of the guard see it: its key and fingerprint, checked before any store
// is asked. What it has done and answers is guard-types.ts.

/** One guarded call, as the parts of the guard see it. */
export interface CallState {
  readonly call: GuardedCall;
  readonly policy: ResolvedPolicy;
  readonly ref: RecordRef;
  readonly runId: string | undefined;
  /** What the store compares to tell a reused key with other arguments (the key itself when unchecked). */
  readonly fingerprint: string;
  readonly checkFingerprint: boolean;
  /** The policy's description of the call (`describe`), recorded for operators; see call-description.ts. */
  readonly description: string | undefined;
  /** When the call began (monotonic ms): `waitTimeoutMs` counts from here. */
  readonly waitStartedMs: number;
  /** The in-flight call this call leads, if it leads one: a lost lease sends its followers to the store. */
  flight: Flight | undefined;
  /** The call's span and metric points, when the guard has telemetry (docs/observability.md). */
  trace: CallObserver | undefined;
  /**
   * During a key-secret rotation (`keySecret: [current, previous]`): the same call keyed with the
   * previous secret, derived when first needed (a claim that started a fresh record). See
   * previous-secret.ts.
   */
  readonly underPreviousSecret: (() => CallState) | undefined;
  /** For a call keyed with the previous secret: the call under the current one. */
  readonly underCurrentSecret: CallState | undefined;
}

/**
 * The state of a call that claims: its key (RFC 8785 canonical arguments, docs/key-spec.md) and
 * fingerprint, checked before anything reaches a store.
 * @throws KeyDerivationError the tenant is no valid name, or the key cannot be derived
 * @throws TypeError the call was made from inside the body of the same call
 */
export function callStateOf(
  call: GuardedCall,
  policy: ResolvedPolicy,
  defaultTenant: string,
  keySecret: KeySecret | undefined,
  previousKeySecret?: KeySecret,
): CallState {
  const tenant = call.tenant ?? defaultTenant;
  const tenantProblem = cachedNameProblem(tenant);
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
    secret: keySecret,
  });
  const { fingerprint, checkFingerprint } = fingerprintFor(call, policy, key, keySecret);
  const running = currentToolCall();
  if (running !== undefined && running.idempotencyKey === key && running.tenant === tenant) {
    throw new TypeError(
      `guard.run for tool "${call.tool}" was called from inside the body of the same call ` +
        `(idempotency key ${key}): it would wait for itself. Call the tool's own function instead.`,
    );
  }
  const state: CallState = {
    call,
    policy,
    ref: { tenant, key },
    runId,
    fingerprint,
    checkFingerprint,
    description: describeCall(policy.describe, call.arguments),
    waitStartedMs: performance.now(),
    flight: undefined,
    trace: undefined,
    underPreviousSecret:
      previousKeySecret === undefined
        ? undefined
        : () => ({
            ...callStateOf(call, policy, defaultTenant, previousKeySecret),
            waitStartedMs: state.waitStartedMs,
            flight: state.flight,
            trace: state.trace,
            underCurrentSecret: state,
          }),
    underCurrentSecret: undefined,
  };
  return state;
}

/**
 * What the store compares to tell a reused key with other arguments.
 * - A business or `'call'` key: the fingerprint of every argument, checked (IETF Idempotency-Key
 *   draft: 422 on mismatch).
 * - An all-arguments key already commits to every argument: the key itself, unchecked.
 * - A key of some arguments: the fingerprint of every argument, so a repeat with other non-key
 *   arguments is told (`argumentsDiffer`), checked only with `onArgumentsMismatch: 'conflict'`.
 *   Non-key arguments need not be hashable: when they are not, the key stands in, unchecked.
 */
function fingerprintFor(
  call: GuardedCall,
  policy: ResolvedPolicy,
  key: string,
  keySecret: KeySecret | undefined,
): { fingerprint: string; checkFingerprint: boolean } {
  if (policy.key !== 'arguments')
    return { fingerprint: fingerprintOf(call, keySecret), checkFingerprint: true };
  if (policy.keyArguments === undefined) return { fingerprint: key, checkFingerprint: false };
  const checkFingerprint = policy.onArgumentsMismatch === 'conflict';
  try {
    return { fingerprint: fingerprintOf(call, keySecret), checkFingerprint };
  } catch (error) {
    // An approval binds every argument: a fingerprint of the key arguments alone would let an
    // approval of one call authorise the same key with other arguments.
    if (checkFingerprint || policy.approval === 'required') throw error;
    return { fingerprint: key, checkFingerprint: false };
  }
}

/** The fingerprint of every argument; a value that cannot be read is a KeyDerivationError. */
function fingerprintOf(call: GuardedCall, keySecret: KeySecret | undefined): string {
  try {
    return argumentsFingerprint(call.arguments, { secret: keySecret });
  } catch (error) {
    if (!CanonicalizationError.isInstance(error)) throw error;
    throw new KeyDerivationError(call.tool, `the arguments cannot be fingerprinted: ${error.message}`, {
      cause: error,
    });
  }
}
