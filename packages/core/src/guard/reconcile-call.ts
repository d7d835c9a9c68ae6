// The stopped call's side of reconcile: where the guard would throw IndeterminateOutcomeError (or
// ExecutionAbandonedError) for a policy with a probe, the probe is asked first, and a verdict it
// could settle answers the call (docs/reconcile.md). Calls without a probe never enter this file.
import { ExecutionAbandonedError } from '../errors/execution-abandoned-error.js';
import { IndeterminateOutcomeError } from '../errors/indeterminate-outcome-error.js';
import { ToolTimeoutError } from '../errors/tool-timeout-error.js';
import type { ResolvedReconcile } from '../policy/reconcile-policy.js';
import type { IdempotencyRecord } from '../store/idempotency-store.js';
import type { CallState } from './call-state.js';
import { claimLoop } from './claim-loop.js';
import type { GuardRuntime } from './guard-runtime.js';
import type { Answer, Body } from './guard-types.js';
import { type ProbeReport, probeBudgetMs, probeLeaseRef, probeRecord, reconcileEvent } from './reconcile.js';

/**
 * Claim and run the call (claim-loop.ts); for a policy with a `reconcile` probe, a stop that says
 * the outcome is unknown is first put to the probe.
 */
export function claimOrReconcile<T>(
  runtime: GuardRuntime,
  state: CallState,
  body: Body<T>,
  alreadyWaiting: boolean,
): Promise<Answer<T>> {
  const reconcile = state.policy.reconcile;
  if (reconcile === undefined) return claimLoop<T>(runtime, state, body, alreadyWaiting);
  return claimReconciled<T>(runtime, state, body, alreadyWaiting, reconcile);
}

async function claimReconciled<T>(
  runtime: GuardRuntime,
  state: CallState,
  body: Body<T>,
  alreadyWaiting: boolean,
  reconcile: ResolvedReconcile,
): Promise<Answer<T>> {
  try {
    return await claimLoop<T>(runtime, state, body, alreadyWaiting);
  } catch (error) {
    const stopped = stoppedRecordOf(state, error);
    if (stopped === undefined) throw error;
    let record: IdempotencyRecord | null;
    try {
      record = await runtime.store.get(state.ref);
    } catch {
      throw error;
    }
    // Only the record this stop is about, while nobody holds it: a record in progress (a live
    // holder, or a new life of the key) is never probed from here.
    if (
      record === null ||
      (record.state !== 'indeterminate' && record.state !== 'abandoned') ||
      (stopped.fence > 0 && record.fence !== stopped.fence)
    ) {
      throw error;
    }
    const report = await probeRecord({
      runtime,
      ref: state.ref,
      record,
      reconcile,
      arguments: state.call.arguments,
      signal: state.call.signal,
      apply: true,
      fallbackRetentionMs: state.policy.retentionMs,
    }).catch((): ProbeReport => ({ verdict: 'failed', tries: 0, errorType: 'StoreUnavailableError' }));
    runtime.emit('tool.reconciled', state, record, { reconcile: reconcileEvent(report) });
    if (report.applied === 'resolved') {
      if (report.verdict === 'happened' && report.outcome !== undefined) {
        const value = runtime.decodeOutcome(report.outcome, state.call.tool) as T;
        return { value, encoded: report.outcome, attempt: record.attempt, fence: record.fence };
      }
      // The probe vouched that nothing happened and the key is free: one more round, never a
      // second probe from this call (claimLoop, not this function).
      return claimLoop<T>(runtime, state, body, true);
    }
    if (report.verdict === 'busy') {
      const settled = await afterOtherProbe<T>(runtime, state, record, reconcile);
      if (settled !== undefined) return settled;
    }
    throw withReport(error, report);
  }
}

/** The fence of the record a stop concerns, when the stop is one a probe may answer. */
function stoppedRecordOf(state: CallState, error: unknown): { readonly fence: number } | undefined {
  if (ExecutionAbandonedError.isInstance(error)) return { fence: error.fence };
  if (!IndeterminateOutcomeError.isInstance(error)) return undefined;
  // The caller's own abort or timeout (rule G4) is answered at once: the body may still run.
  if (state.call.signal?.aborted === true || ToolTimeoutError.isInstance(error.cause)) return undefined;
  return { fence: error.fence };
}

/**
 * Another worker is probing this record: wait for its lease to end (it is released once its
 * verdict is settled), then answer the call with the recorded outcome if there is one now.
 * Otherwise the call stops as it would have (a release by the other probe lets ITS call run).
 */
async function afterOtherProbe<T>(
  runtime: GuardRuntime,
  state: CallState,
  record: IdempotencyRecord,
  reconcile: ResolvedReconcile,
): Promise<Answer<T> | undefined> {
  try {
    await runtime.store.waitForSettle(probeLeaseRef(state.ref, record.fence), {
      timeoutMs: probeBudgetMs(reconcile),
      signal: state.call.signal,
    });
    const after = await runtime.store.get(state.ref);
    if (after?.state !== 'completed' || after.outcome === undefined) return undefined;
    const value = runtime.decodeOutcome(after.outcome, state.call.tool) as T;
    runtime.emit('tool.deduplicated', state, after);
    return { value, encoded: after.outcome, attempt: after.attempt, fence: after.fence };
  } catch {
    return undefined;
  }
}

/** The stop, telling what the probe answered. */
function withReport(error: unknown, report: ProbeReport): unknown {
  if (!IndeterminateOutcomeError.isInstance(error)) return error;
  const verdict =
    report.applied !== undefined && report.applied !== 'resolved' ? report.applied : report.verdict;
  return new IndeterminateOutcomeError(
    {
      key: error.key,
      tool: error.tool,
      attempt: error.attempt,
      fence: error.fence,
      reasonType: error.reasonType,
      reason: error.reason,
      ...(error.callId === undefined ? {} : { callId: error.callId }),
      reconcile: { verdict, tries: report.tries },
    },
    error.cause === undefined ? undefined : { cause: error.cause },
  );
}
