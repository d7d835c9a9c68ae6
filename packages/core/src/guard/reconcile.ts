// A reconcile probe asked about one record, under a lease of its own, and its verdict settled as
// an operator's resolution would be: conditional on the holder read, never over a live holder
// (docs/reconcile.md). The stopped call's side is reconcile-call.ts; the operator's is
// reconcile-operator.ts.
import { createHash } from 'node:crypto';
import { HolderAliveError } from '../errors/holder-alive-error.js';
import { OutcomeEncodingError } from '../errors/outcome-encoding-error.js';
import {
  MAX_RECONCILE_DETAIL_LENGTH,
  RECONCILE_TOOL,
  type ReconcileVerdict,
  type ResolvedReconcile,
} from '../policy/reconcile-policy.js';
import type {
  ClaimOptions,
  Holder,
  IdempotencyRecord,
  RecordRef,
  Resolution,
} from '../store/idempotency-store.js';
import { MAX_REASON_LENGTH } from '../store/store-input.js';
import type { GuardEvent } from './guard-events.js';
import type { GuardRuntime } from './guard-runtime.js';
import { LeaseKeeper } from './lease-keeper.js';
import { resolveRecord } from './operator.js';
import { describeError } from './recorded-error.js';

/**
 * What a probe answered, in one word:
 * - `happened`, `not_happened`, `unknown`: the probe's own verdict;
 * - `failed`: every try threw (or answered something that is no verdict); `timeout`: the last
 *   try ran past `timeoutMs`; `aborted`: the caller's signal, `lease_lost`: the probe's lease was
 *   lost while it ran;
 * - `busy`: another worker is probing the same record (its lease is live), this one did not ask.
 */
export type ReconcileVerdictName =
  | 'happened'
  | 'not_happened'
  | 'unknown'
  | 'failed'
  | 'timeout'
  | 'aborted'
  | 'lease_lost'
  | 'busy';

/**
 * What the store answered to a verdict's resolution: `resolved`, or nothing written because the
 * record changed (`changed`: another holder or life; `not_found`; `not_resolvable`: completed),
 * its holder is alive (`holder_alive`, never forced), or the probe's outcome cannot be encoded
 * (`unencodable`).
 */
export type ReconcileApplied =
  | 'resolved'
  | 'changed'
  | 'not_found'
  | 'not_resolvable'
  | 'holder_alive'
  | 'unencodable';

/** One probe of one record. */
export interface ProbeReport {
  readonly verdict: ReconcileVerdictName;
  /** Tries made (0 when `busy`). */
  readonly tries: number;
  /** The verdict's `detail`, escaped and bounded. */
  readonly detail?: string;
  /** The type of the last try's error (`failed`). */
  readonly errorType?: string;
  /** When the verdict was applied: the store's answer. */
  readonly applied?: ReconcileApplied;
  /** `happened`: the probe's outcome, encoded by the guard's codec. */
  readonly outcome?: string;
}

/** One probe to run: the record as read (its holder is the one a verdict may settle). */
export interface ProbeRun {
  readonly runtime: GuardRuntime;
  readonly ref: RecordRef;
  readonly record: IdempotencyRecord;
  readonly reconcile: ResolvedReconcile;
  readonly arguments: Record<string, unknown> | undefined;
  readonly signal: AbortSignal | undefined;
  /** Settle the record by a `happened` / `not_happened` verdict. */
  readonly apply: boolean;
  /** The retention of a resolution when the record does not report its call's (ms). */
  readonly fallbackRetentionMs: number;
}

/**
 * The probe's own lease record: same tenant, key = SHA-256 (lowercase hex, as every key) of a
 * domain-separated string of the record's key and fence, so each attempt of a record has one.
 */
export function probeLeaseRef(ref: RecordRef, fence: number): RecordRef {
  const key = createHash('sha256').update(`${RECONCILE_TOOL}\u0000${ref.key}\u0000${fence}`).digest('hex');
  return { tenant: ref.tenant, key };
}

/**
 * Ask the probe about `run.record` under the probe's lease, and (with `apply`) settle the record
 * by a `happened` / `not_happened` verdict with `expect` = the holder read and `by: 'reconcile'`.
 * The lease is released after the settlement, so a worker that found it busy and waited on it
 * reads the settled record. Never throws for what the probe does; a store that cannot be
 * reached while claiming the lease is the store's error.
 * @throws StoreUnavailableError, StoreInputError
 */
export async function probeRecord(run: ProbeRun): Promise<ProbeReport> {
  const { runtime, ref, record, reconcile } = run;
  const lease = probeLeaseRef(ref, record.fence);
  const owner = runtime.nextOwner();
  const sentAtMs = performance.now();
  const claim = await runtime.storeCall('claim', () =>
    runtime.store.claim(lease, probeLeaseOptions(lease, owner, reconcile.leaseMs)),
  );
  if (claim.status !== 'acquired') return { verdict: 'busy', tries: 0 };
  const holder: Holder = { fence: claim.fence, owner };
  const leaseLost = new AbortController();
  const keeper = new LeaseKeeper({
    store: runtime.store,
    ref: lease,
    holder,
    leaseMs: reconcile.leaseMs,
    heartbeatMs: Math.max(1, Math.floor(reconcile.leaseMs / 3)),
    leaseFromMs: sentAtMs,
    nowMs: performance.now(),
    listener: { onLeaseLost: () => leaseLost.abort() },
  });
  try {
    const report = await askProbe(run, leaseLost.signal);
    if (!run.apply || leaseLost.signal.aborted) return report;
    if (report.verdict !== 'happened' && report.verdict !== 'not_happened') return report;
    return { ...report, applied: await applyVerdict(run, report) };
  } finally {
    keeper.stop();
    await runtime.releaseQuietly(lease, holder);
  }
}

/** The claim of a probe's lease: at-least-once (a dead prober's lease is taken over), short. */
function probeLeaseOptions(lease: RecordRef, owner: string, leaseMs: number): ClaimOptions {
  return {
    tool: RECONCILE_TOOL,
    fingerprint: lease.key,
    owner,
    leaseMs,
    retentionMs: leaseMs,
    mode: 'at-least-once',
    maxAttempts: 1000,
    checkFingerprint: false,
  };
}

/** The tries of the probe, each bounded by `timeoutMs`; an answer ends them, a throw or timeout retries. */
async function askProbe(run: ProbeRun, leaseLost: AbortSignal): Promise<ProbeReport> {
  const { reconcile, record, ref } = run;
  let last: ProbeReport = { verdict: 'failed', tries: 0 };
  for (let probeAttempt = 1; probeAttempt <= reconcile.attempts; probeAttempt++) {
    if (probeAttempt > 1) await pause(reconcile.backoffMs * 2 ** (probeAttempt - 2), run.signal, leaseLost);
    if (run.signal?.aborted === true) return { verdict: 'aborted', tries: probeAttempt - 1 };
    if (leaseLost.aborted) return { verdict: 'lease_lost', tries: probeAttempt - 1 };
    const answer = await oneTry(run, leaseLost, (signal) =>
      reconcile.probe({
        arguments: run.arguments,
        idempotencyKey: ref.key,
        fence: record.fence,
        attempt: record.attempt,
        probeAttempt,
        tool: record.tool,
        tenant: ref.tenant,
        signal,
      }),
    );
    if (answer.kind === 'verdict') return verdictReport(run, answer.verdict, probeAttempt);
    if (answer.kind === 'stopped') {
      return { verdict: leaseLost.aborted ? 'lease_lost' : 'aborted', tries: probeAttempt };
    }
    last =
      answer.kind === 'timeout'
        ? { verdict: 'timeout', tries: probeAttempt }
        : { verdict: 'failed', tries: probeAttempt, errorType: answer.errorType };
  }
  return last;
}

type TryAnswer =
  | { readonly kind: 'verdict'; readonly verdict: ReconcileVerdict }
  | { readonly kind: 'threw'; readonly errorType: string }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'stopped' };

/** One try: the probe's answer, or its deadline, or a stop, whichever comes first (a hung probe never holds the guard). */
function oneTry(
  run: ProbeRun,
  leaseLost: AbortSignal,
  ask: (signal: AbortSignal) => ReconcileVerdict | PromiseLike<ReconcileVerdict>,
): Promise<TryAnswer> {
  const controller = new AbortController();
  return new Promise<TryAnswer>((resolve) => {
    const finish = (answer: TryAnswer, abortReason?: unknown) => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onStop);
      leaseLost.removeEventListener('abort', onStop);
      if (abortReason !== undefined) controller.abort(abortReason);
      resolve(answer);
    };
    const onStop = () => finish({ kind: 'stopped' }, new Error('the reconcile probe was stopped'));
    const timer = setTimeout(
      () => finish({ kind: 'timeout' }, new Error('the reconcile probe ran past its timeoutMs')),
      run.reconcile.timeoutMs,
    );
    run.signal?.addEventListener('abort', onStop, { once: true });
    leaseLost.addEventListener('abort', onStop, { once: true });
    let answer: ReconcileVerdict | PromiseLike<ReconcileVerdict>;
    try {
      answer = ask(controller.signal);
    } catch (error) {
      finish({ kind: 'threw', errorType: describeError(error).type });
      return;
    }
    Promise.resolve(answer).then(
      (verdict) =>
        finish(
          isVerdict(verdict) ? { kind: 'verdict', verdict } : { kind: 'threw', errorType: 'InvalidVerdict' },
        ),
      (error: unknown) => finish({ kind: 'threw', errorType: describeError(error).type }),
    );
  });
}

/** Exactly one of the three shapes; anything else is no verdict. */
function isVerdict(value: unknown): value is ReconcileVerdict {
  if (value === null || typeof value !== 'object') return false;
  const verdict = value as Record<string, unknown>;
  if (verdict.happened === true) return Object.hasOwn(verdict, 'outcome') && verdict.unknown === undefined;
  if (verdict.happened === false) return verdict.unknown === undefined;
  return verdict.unknown === true && verdict.happened === undefined;
}

function verdictReport(run: ProbeRun, verdict: ReconcileVerdict, tries: number): ProbeReport {
  const detail = escapedDetail(verdict.detail);
  const withDetail = detail === undefined ? {} : { detail };
  if ('unknown' in verdict) return { verdict: 'unknown', tries, ...withDetail };
  if (!verdict.happened) return { verdict: 'not_happened', tries, ...withDetail };
  try {
    const outcome = run.runtime.encodeOutcome(verdict.outcome, run.record.tool);
    return { verdict: 'happened', tries, outcome, ...withDetail };
  } catch (error) {
    if (!OutcomeEncodingError.isInstance(error)) throw error;
    return { verdict: 'happened', tries, ...withDetail };
  }
}

/** Settle the record read by the verdict, as an operator would: conditional, never forced. */
async function applyVerdict(run: ProbeRun, report: ProbeReport): Promise<ReconcileApplied> {
  const { runtime, ref, record } = run;
  if (report.verdict === 'happened' && report.outcome === undefined) return 'unencodable';
  const audit = { by: 'reconcile', reason: reasonOf(report, run.reconcile.attempts) };
  const expect = { fence: record.fence, owner: record.owner };
  const resolution: Resolution =
    report.verdict === 'happened'
      ? { outcome: report.outcome as string, ...audit, expect }
      : { released: true, ...audit, expect };
  try {
    const result = await resolveRecord(
      runtime,
      ref,
      resolution,
      { givenMs: undefined, fallbackMs: run.fallbackRetentionMs },
      record,
    );
    return result.status;
  } catch (error) {
    if (HolderAliveError.isInstance(error)) return 'holder_alive';
    // A record written with another codec: the probe's outcome could not be read back.
    if (OutcomeEncodingError.isInstance(error)) return 'unencodable';
    throw error;
  }
}

/** The resolution's reason: what the probe said, bounded. */
export function reasonOf(report: ProbeReport, attempts: number): string {
  const said = `probe: ${report.verdict} (try ${report.tries} of ${attempts})`;
  const reason = report.detail === undefined ? said : `${said}: ${report.detail}`;
  return reason.slice(0, MAX_REASON_LENGTH);
}

/**
 * Controls, invisible and reordering characters (bidi overrides), lone surrogates: what a
 * terminal or a page must never receive raw (the set of the CLI's escape.ts).
 */
const UNSAFE_IN_DETAIL =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A verdict's `detail` as it is kept: control, invisible and reordering characters and lone surrogates written as `\uXXXX`
 * (text from a provider is shown to people in terminals and pages), cut to
 * MAX_RECONCILE_DETAIL_LENGTH code units. Undefined when it is no non-empty string.
 */
export function escapedDetail(detail: unknown): string | undefined {
  if (typeof detail !== 'string' || detail.length === 0) return undefined;
  const escaped = detail.replace(UNSAFE_IN_DETAIL, (character) => {
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  let cut = escaped.slice(0, MAX_RECONCILE_DETAIL_LENGTH);
  // Never end on half of a surrogate pair.
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1);
  return cut;
}

/** Wait `ms`, or less when stopped. */
function pause(ms: number, signal: AbortSignal | undefined, leaseLost: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      leaseLost.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    leaseLost.addEventListener('abort', done, { once: true });
  });
}

/** The longest a probe of `reconcile` can take (ms): every try at its deadline, every pause. */
export function probeBudgetMs(reconcile: ResolvedReconcile): number {
  let total = 0;
  for (let probeAttempt = 1; probeAttempt <= reconcile.attempts; probeAttempt++) {
    total += reconcile.timeoutMs + (probeAttempt > 1 ? reconcile.backoffMs * 2 ** (probeAttempt - 2) : 0);
  }
  return Math.min(total + 1000, 2_147_483_647);
}

/** A probe's report as events carry it: never the outcome. */
export function reconcileEvent(report: ProbeReport): NonNullable<GuardEvent['reconcile']> {
  return {
    verdict: report.verdict,
    tries: report.tries,
    ...(report.applied === undefined ? {} : { applied: report.applied }),
    ...(report.detail === undefined ? {} : { detail: report.detail }),
    ...(report.errorType === undefined ? {} : { errorType: report.errorType }),
  };
}
