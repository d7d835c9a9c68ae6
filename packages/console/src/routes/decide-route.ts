// POST /decide: an operator approves or denies a call that waits for a decision. Checked as the
// settling actions are, in this order: a same-origin post, the form token of this operator and
// browser, the tenant, the record's version (unchanged since the operator looked at it), the
// reason. Then the store decides in its own atomic step, and only on the request the page showed:
// its owner, tool and argument fingerprint, all taken from the record read, never from the form
// (`guard.decide`, so the application's onEvent gets `tool.approval_decided`).
import { DEFAULT_RETENTION_MS, type DecideResult, type RecordRef } from '@toolfence/core';
import { formTokenProblem } from '../csrf.js';
import { href } from '../html.js';
import { recordVersion } from '../record-version.js';
import { readForm } from '../request.js';
import { redirect } from '../respond.js';
import { crossOriginProblem } from '../same-origin.js';
import { reasonProblem } from './action-route.js';
import { ConsoleRefusal, type RouteContext, recordRefOf } from './context.js';
import { readRecord, showRecord } from './record-route.js';

interface DecideRequest {
  readonly ref: RecordRef;
  readonly approve: boolean;
  readonly version: string;
  readonly reason: string;
}

/** The checked fields of a posted decision. @throws ConsoleRefusal, FormError */
async function decideRequestOf(context: RouteContext): Promise<DecideRequest> {
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
  const decision = form.get('decision');
  if (decision !== 'approve' && decision !== 'deny') {
    throw new ConsoleRefusal(400, 'Bad request', "The decision must be 'approve' or 'deny'.");
  }
  return {
    ref,
    approve: decision === 'approve',
    version: form.get('version') ?? '',
    reason: (form.get('reason') ?? '').trim(),
  };
}

const CHANGED =
  'The request changed since you opened it (another operator decided it, or it expired and the call asked again): nothing was decided. Review it again.';

/** The record page again (409 or 400) with the problem beside the form the operator used. */
function showAgain(context: RouteContext, request: DecideRequest, status: number, problem: string) {
  return showRecord(context, request.ref, status, {
    decideAgain: { action: request.approve ? 'approve' : 'deny', reason: request.reason, problem },
  });
}

/** What a refused decision tells the operator, in plain words. */
function refusal(result: Exclude<DecideResult, { status: 'decided' }>): string {
  switch (result.status) {
    case 'changed':
      return CHANGED;
    case 'denied':
      return 'This call was denied already: a denial stays a denial. Nothing was decided.';
    case 'consumed':
      return `This call was claimed meanwhile (it is now ${result.record.state}): the approval was used, or it ran without one. Nothing was decided.`;
    case 'conflict':
      return 'The key now holds another call (another tool or other arguments). Nothing was decided.';
    default:
      return 'The request is gone (it expired or was forgotten meanwhile). Nothing was decided.';
  }
}

/** POST /decide: the decision through the store, then the record page (303). */
export async function decideRoute(context: RouteContext): Promise<void> {
  const request = await decideRequestOf(context);
  const { store } = context.options;
  const decide = store.decideApproval?.bind(store);
  if (decide === undefined) {
    throw new ConsoleRefusal(
      409,
      'No approvals',
      'This store keeps no approvals (it has no decideApproval): there is nothing to decide.',
    );
  }
  const record = await readRecord(context, request.ref);
  if (record === null) {
    throw new ConsoleRefusal(409, 'Nothing to decide', 'There is no live record of this key any more.');
  }
  const decidable = record.state === 'awaiting_approval' || (!request.approve && record.state === 'approved');
  if (recordVersion(record) !== request.version || !decidable) {
    return showAgain(context, request, 409, CHANGED);
  }
  const problem = reasonProblem(request.reason);
  if (problem !== undefined) return showAgain(context, request, 400, problem);
  const audit = {
    by: context.operator.id,
    reason: request.reason,
    // The request's own retention (its policy's): a decision neither shortens nor extends it.
    retentionMs: record.retentionMs ?? DEFAULT_RETENTION_MS,
  };
  const { tool, fingerprint, owner } = record;
  const result =
    owner === ''
      ? // An approval made before its call asked has no request owner: tool and fingerprint bind it.
        await decide(
          request.ref,
          { approved: request.approve, tool, fingerprint, by: audit.by, reason: audit.reason },
          audit.retentionMs,
        )
      : // Through the guard: the store decides only for this owner, and tool.approval_decided is emitted.
        await context.options.guard.decide(
          { ...request.ref, tool, fingerprint, owner },
          request.approve,
          audit,
        );
  if (result.status !== 'decided') {
    if (result.status === 'not_found') {
      throw new ConsoleRefusal(409, 'Nothing to decide', refusal(result));
    }
    return showAgain(context, request, 409, refusal(result));
  }
  redirect(
    context.response,
    href(context.options.basePath, '/record', {
      tenant: request.ref.tenant,
      key: request.ref.key,
      done: request.approve ? 'approved' : 'denied',
    }),
  );
}
