// The operator's side of reconcile: ask a policy's probe about a record before deciding by hand
// (`guard.reconcile`, `toolfence reconcile`; a console button can call it), and settle it by
// the verdict only when asked to (docs/reconcile.md).
import type { PolicyMap } from '../policy/policy-map.js';
import { type Reconcile, resolveReconcile } from '../policy/reconcile-policy.js';
import type { Holder, IdempotencyRecord, ListedRecord, RecordRef } from '../store/idempotency-store.js';
import { checkHolder, resolutionApplies } from '../store/store-input.js';
import type { GuardRuntime } from './guard-runtime.js';
import {
  type ProbeReport,
  probeRecord,
  type ReconcileApplied,
  type ReconcileVerdictName,
  reconcileEvent,
} from './reconcile.js';

/** Options of `guard.reconcile`. */
export interface ReconcileOptions {
  /** The record's tenant. Default: the guard's. */
  readonly tenant?: string;
  /** The probe to ask (a policy's `reconcile`). Default: `policies[record.tool].reconcile`. */
  readonly reconcile?: Reconcile;
  /** Policies by tool name (what an adapter's `policies` takes): the record's tool picks the probe. */
  readonly policies?: PolicyMap;
  /** The call's arguments, when the operator has them (records never keep them). Default: none. */
  readonly arguments?: Record<string, unknown>;
  /**
   * Settle the record by a `happened` / `not_happened` verdict (`by: 'reconcile'`, the probe's
   * words as `reason`, never forced over a live holder). Default false: only ask.
   */
  readonly apply?: boolean;
  /** The holder (`{ fence, owner }`) of the record the operator looked at: anything else is `changed`. */
  readonly expect?: Holder;
  /** Stops the probe (its tries' signals are aborted). */
  readonly signal?: AbortSignal;
}

/** What `guard.reconcile` found. */
export interface ReconcileResult {
  /**
   * `probed`: the probe was asked (see `verdict`); `not_found`: no record; `completed`: the record
   * already has an outcome (nothing to ask); `changed`: not the record `expect` names.
   */
  readonly status: 'probed' | 'not_found' | 'completed' | 'changed';
  /** The record as read before the probe, without its outcome; null when there is none. */
  readonly record: ListedRecord | null;
  /** What the probe answered (`probed`). */
  readonly verdict?: ReconcileVerdictName;
  /** Tries made (`probed`). */
  readonly tries?: number;
  /** The probe's note, escaped and bounded. */
  readonly detail?: string;
  /** The type of the last try's error, for `failed`. */
  readonly errorType?: string;
  /** With `apply`, for `happened` / `not_happened`: the store's answer to the resolution. */
  readonly applied?: ReconcileApplied;
}

/**
 * @throws TypeError no probe: neither `reconcile` nor a policy with one for the record's tool
 * @throws PolicyError the probe's bounds are invalid
 * @throws StoreInputError, StoreUnavailableError
 */
export async function reconcileRecord(
  runtime: GuardRuntime,
  ref: RecordRef,
  options: ReconcileOptions,
  fallbackRetentionMs: number,
): Promise<ReconcileResult> {
  if (options.expect !== undefined) checkHolder(options.expect);
  const record: IdempotencyRecord | null = await runtime.storeCall('get', () => runtime.store.get(ref));
  if (record === null) return { status: 'not_found', record: null };
  const listed = withoutOutcome(record);
  if (options.expect !== undefined && !resolutionApplies(record, { expect: options.expect })) {
    return { status: 'changed', record: listed };
  }
  if (record.state === 'completed') return { status: 'completed', record: listed };
  const reconcile = resolveReconcile(
    options.reconcile ?? probeOf(options.policies, record.tool),
    record.tool,
  );
  if (reconcile === undefined) {
    throw new TypeError(
      `guard.reconcile: no probe for tool "${record.tool}" (give { reconcile } or { policies } whose policy for it has reconcile)`,
    );
  }
  const report: ProbeReport = await probeRecord({
    runtime,
    ref,
    record,
    reconcile,
    arguments: options.arguments,
    signal: options.signal,
    apply: options.apply === true,
    fallbackRetentionMs,
  });
  runtime.emitOperator('tool.reconciled', ref, record, { reconcile: reconcileEvent(report) });
  const { outcome: _outcome, ...said } = report;
  return { status: 'probed', record: listed, ...said };
}

/** The policy map's probe for `tool`, read from own properties only. */
function probeOf(policies: PolicyMap | undefined, tool: string): Reconcile | undefined {
  if (policies === undefined || policies === null || !Object.hasOwn(policies, tool)) return undefined;
  return (policies as Record<string, { reconcile?: Reconcile } | undefined>)[tool]?.reconcile;
}

function withoutOutcome(record: IdempotencyRecord): ListedRecord {
  const { outcome: _outcome, ...listed } = record;
  return listed;
}
