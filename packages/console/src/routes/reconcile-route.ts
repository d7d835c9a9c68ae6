// POST /reconcile: an operator asks the tool's reconcile probe about a record ("Ask the
// provider", step=ask: nothing is written to the record) or settles the record by the verdict
// shown (step=settle, through guard.reconcile with apply). Checked as the settling actions are, in
// this order: a same-origin post, the form token of this operator and browser, the tenant, the
// record's version (unchanged since the operator looked at it) and holder. A settlement is
// conditional on the holder shown (the store answers `changed` for anything else) and applies
// only when the provider gives the same answer again.
import type {
  Holder,
  Reconcile,
  ReconcileApplied,
  ReconcileResult,
  ReconcileVerdict,
  RecordRef,
} from '@toolfence/core';
import { formTokenProblem } from '../csrf.js';
import { href } from '../html.js';
import { recordVersion } from '../record-version.js';
import { readForm } from '../request.js';
import { redirect } from '../respond.js';
import { crossOriginProblem } from '../same-origin.js';
import { postedHolder } from './action-route.js';
import { ConsoleRefusal, type RouteContext, recordRefOf } from './context.js';
import { probeFor, readRecord, settleableAt, showRecord, storeNowMs } from './record-route.js';

type Shown = 'happened' | 'not_happened';

interface ReconcileRequest {
  readonly ref: RecordRef;
  readonly version: string;
  readonly expect: Holder | undefined;
  /** The verdict the page showed, for step=settle; undefined for step=ask. */
  readonly settle: Shown | undefined;
}

/** The checked fields of a posted ask or settle. @throws ConsoleRefusal, FormError */
async function reconcileRequestOf(context: RouteContext): Promise<ReconcileRequest> {
  const crossOrigin = crossOriginProblem(context.request, context.options.allowedOrigins);
  if (crossOrigin !== undefined) throw new ConsoleRefusal(403, 'Refused', `Refused: ${crossOrigin}.`);
  const form = await readForm(context.request, context.options.maxBodyBytes);
  const tokenProblem = formTokenProblem(
    context.csrf,
    context.request,
    context.operator.id,
    form.get('csrf') ?? undefined,
  );
  if (tokenProblem !== undefined) throw new ConsoleRefusal(403, 'Refused', `Refused: ${tokenProblem}.`);
  const ref = recordRefOf(context.operator, form.get('tenant'), form.get('key'));
  const step = form.get('step');
  if (step !== 'ask' && step !== 'settle') {
    throw new ConsoleRefusal(400, 'Bad request', "The step must be 'ask' or 'settle'.");
  }
  const verdict = form.get('verdict');
  if (step === 'settle' && verdict !== 'happened' && verdict !== 'not_happened') {
    throw new ConsoleRefusal(
      400,
      'Bad request',
      "A settlement needs the verdict 'happened' or 'not_happened'.",
    );
  }
  return {
    ref,
    version: form.get('version') ?? '',
    expect: postedHolder(form.get('fence'), form.get('owner')),
    settle: step === 'settle' ? (verdict as Shown) : undefined,
  };
}

const CHANGED =
  'The record changed since you opened it (someone settled it, or a new attempt of the call holds it): nothing was asked or settled. Review it again.';

function verdictName(answer: ReconcileVerdict | undefined): string | undefined {
  if (answer === null || typeof answer !== 'object') return undefined;
  if ((answer as { happened?: unknown }).happened === true) return 'happened';
  if ((answer as { happened?: unknown }).happened === false) return 'not_happened';
  return undefined;
}

/**
 * The probe, answering `unknown` (so nothing is settled) when the provider's answer now differs
 * from the one the operator saw: the operator agreed to that answer, not to whatever comes next.
 */
function sameAnswerOnly(reconcile: Reconcile, shown: Shown, seen: { differed?: string }): Reconcile {
  const probe = typeof reconcile === 'function' ? reconcile : reconcile.probe.bind(reconcile);
  const checked: typeof probe = async (input) => {
    const answer = await probe(input);
    const name = verdictName(answer);
    if (name === undefined || name === shown) return answer;
    seen.differed = name;
    return { unknown: true, detail: `answered ${name} this time, not ${shown}` };
  };
  return typeof reconcile === 'function' ? checked : { ...reconcile, probe: checked };
}

/** Why a verdict did not settle the record, in plain words. */
function notApplied(applied: ReconcileApplied | undefined): string {
  switch (applied) {
    case 'changed':
      return CHANGED;
    case 'holder_alive':
      return 'Its holder is alive again (its lease is live): a live body may still take effect, so nothing was settled. Reload when it settles.';
    case 'not_found':
      return 'The record is gone (released or forgotten meanwhile): nothing was settled.';
    case 'unencodable':
      return "The probe's outcome cannot be recorded (the codec refused it): nothing was settled.";
    default:
      return 'The store would not settle this record: nothing was settled.';
  }
}

function askedOf(result: ReconcileResult, problem?: string) {
  return {
    verdict: result.verdict ?? 'unknown',
    tries: result.tries ?? 0,
    detail: result.detail,
    errorType: result.errorType,
    problem,
  };
}

/** POST /reconcile: the verdict shown on the record page, or the record settled by it (303). */
export async function reconcileRoute(context: RouteContext): Promise<void> {
  const request = await reconcileRequestOf(context);
  const { ref } = request;
  const record = await readRecord(context, ref);
  if (record === null) throw new ConsoleRefusal(409, 'Record changed', CHANGED);
  const nowMs = record.state === 'in_progress' ? await storeNowMs(context, ref.tenant) : undefined;
  const holderShown =
    request.expect !== undefined &&
    request.expect.fence === record.fence &&
    request.expect.owner === record.owner;
  if (recordVersion(record) !== request.version || !holderShown || !settleableAt(record, nowMs)) {
    throw new ConsoleRefusal(409, 'Record changed', CHANGED);
  }
  const reconcile = probeFor(context.options.policies, record.tool);
  if (reconcile === undefined) {
    throw new ConsoleRefusal(
      409,
      'No probe',
      'The console has no reconcile probe for this tool: nothing was asked.',
    );
  }
  const seen: { differed?: string } = {};
  const result = await context.options.guard.reconcile(ref.key, {
    tenant: ref.tenant,
    reconcile: request.settle === undefined ? reconcile : sameAnswerOnly(reconcile, request.settle, seen),
    expect: request.expect,
    apply: request.settle !== undefined,
  });
  if (result.status !== 'probed') throw new ConsoleRefusal(409, 'Record changed', CHANGED);
  if (request.settle === undefined) return showRecord(context, ref, 200, { asked: askedOf(result) });
  if (seen.differed !== undefined) {
    const problem = `The provider answered ${seen.differed} this time, not ${request.settle} as shown: nothing was settled. Ask again and decide by the new answer.`;
    return showRecord(context, ref, 409, { asked: askedOf(result, problem) });
  }
  if (result.applied !== 'resolved') {
    const problem =
      result.applied === undefined
        ? `The provider answered ${result.verdict ?? 'nothing'} this time: nothing was settled.`
        : notApplied(result.applied);
    return showRecord(context, ref, 409, { asked: askedOf(result, problem) });
  }
  redirect(
    context.response,
    href(context.options.basePath, '/record', { tenant: ref.tenant, key: ref.key, done: 'reconciled' }),
  );
}
