// The guard's operator side of approvals: decide on a call (keyed and fingerprinted exactly as
// guard.run claims it) or on a listed request, with a `tool.approval_decided` event, and list the
// requests waiting for a decision. Guard methods delegate here.
import { StoreConfigurationError } from '../errors/store-configuration-error.js';
import type { ResolvedPolicy } from '../policy/idempotency-policy.js';
import type {
  ApprovalDecision,
  DecideResult,
  ListOptions,
  ListPage,
  RecordRef,
} from '../store/idempotency-store.js';
import { checkRetentionMs } from '../store/store-input.js';
import { untraced } from '../telemetry/traced-store.js';
import type { CallState } from './call-state.js';
import type { GuardRuntime } from './guard-runtime.js';
import { listRecords } from './operator.js';

/** Options of `guard.approve` and `guard.deny`. */
export interface ApprovalOptions {
  /** Who decided (a user id, an email), at most `MAX_NAME_LENGTH` code units. */
  readonly by?: string;
  /** Why, in the operator's words, at most `MAX_REASON_LENGTH` code units. */
  readonly reason?: string;
  /**
   * How long the decision is kept (ms), counted from now: an approval not used by then is gone,
   * and so is a denial. Default: the call's policy's `retentionMs`.
   */
  readonly retentionMs?: number;
  /**
   * The request the operator looked at: the `owner` of the `awaiting_approval` record (from
   * `guard.approvals()`). The decision applies only to that request (else `changed`, or
   * `not_found` when it is gone); without it the decision applies to whatever request of this
   * call (same tool and fingerprint) is under the key, or creates the approval ahead of the call.
   */
  readonly expect?: { readonly owner: string };
}

/** A request as `guard.approvals()` lists it: what a decision on it needs. */
export interface ApprovalRequest {
  readonly key: string;
  readonly tenant: string;
  readonly tool: string;
  readonly fingerprint: string;
  /** The asking claim's owner: the decision is made on this request only. */
  readonly owner: string;
}

function decisionOf(
  approved: boolean,
  call: { readonly tool: string; readonly fingerprint: string },
  options: ApprovalOptions,
  operatorFields: Pick<ApprovalDecision, 'runId' | 'callId' | 'description' | 'codec'>,
): ApprovalDecision {
  return {
    approved,
    tool: call.tool,
    fingerprint: call.fingerprint,
    ...(options.by === undefined ? {} : { by: options.by }),
    ...(options.reason === undefined ? {} : { reason: options.reason }),
    ...(options.expect === undefined ? {} : { expect: { owner: options.expect.owner } }),
    ...operatorFields,
  };
}

/**
 * Record the decision in the store's one atomic step and, when it took effect, emit
 * `tool.approval_decided`. @throws StoreConfigurationError the store keeps no approvals;
 * StoreInputError; StoreUnavailableError
 */
async function decide(
  runtime: GuardRuntime,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
): Promise<DecideResult> {
  checkRetentionMs(retentionMs);
  const { store } = runtime;
  const decideApproval = store.decideApproval;
  if (decideApproval === undefined) {
    throw new StoreConfigurationError(
      untraced(store).constructor?.name ?? 'the store',
      'it keeps no approvals (no decideApproval)',
    );
  }
  const result = await runtime.storeCall('decideApproval', () =>
    decideApproval.call(store, ref, decision, retentionMs),
  );
  if (result.status === 'decided') {
    runtime.emitOperator('tool.approval_decided', ref, result.record, {
      approval: {
        approved: decision.approved,
        ...(decision.by === undefined ? {} : { by: decision.by }),
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      },
    });
  }
  return result;
}

/** A decision on the call of `state` (its key and fingerprint as `guard.run` claims them). */
export function decideCall(
  runtime: GuardRuntime,
  state: CallState,
  policy: ResolvedPolicy,
  approved: boolean,
  options: ApprovalOptions,
): Promise<DecideResult> {
  const fields = {
    ...(state.runId === undefined ? {} : { runId: state.runId }),
    ...(state.call.callId === undefined ? {} : { callId: state.call.callId }),
    ...(state.description === undefined ? {} : { description: state.description }),
    codec: runtime.codecName,
  };
  const decision = decisionOf(
    approved,
    { tool: state.call.tool, fingerprint: state.fingerprint },
    options,
    fields,
  );
  return decide(runtime, state.ref, decision, options.retentionMs ?? policy.retentionMs);
}

/** A decision on a listed request (its own `owner` expected unless the options give one). */
export function decideRequest(
  runtime: GuardRuntime,
  request: ApprovalRequest,
  approved: boolean,
  options: ApprovalOptions,
  fallbackRetentionMs: number,
): Promise<DecideResult> {
  const expect = options.expect ?? { owner: request.owner };
  const decision = decisionOf(approved, request, { ...options, expect }, {});
  const ref = { tenant: request.tenant, key: request.key };
  return decide(runtime, ref, decision, options.retentionMs ?? fallbackRetentionMs);
}

/** A page of requests waiting for a decision (`awaiting_approval`), oldest first by default. */
export function listApprovals(runtime: GuardRuntime, options: ListOptions): Promise<ListPage> {
  return listRecords(runtime, { ...options, states: options.states ?? ['awaiting_approval'] });
}
