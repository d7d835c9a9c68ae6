// POST /confirm and POST /resolve: an operator settles a record. Both check, in this order: a
// same-origin post, the form token of this operator and browser, the tenant, the record's
// version (unchanged since the operator looked at it), the reason and the outcome. /confirm
// shows what will happen; /resolve does it through the guard (so `tool.resolved` is emitted),
// with `by` = the operator's id.
import {
  type Holder,
  HolderAliveError,
  type IdempotencyRecord,
  OutcomeEncodingError,
  type RecordRef,
  StoreInputError,
} from '@toolfence/core';
import { isWellFormedText, MAX_REASON_LENGTH } from '@toolfence/core/store';
import { formTokenProblem, issueFormToken } from '../csrf.js';
import { href } from '../html.js';
import { confirmPage } from '../pages/confirm-page.js';
import { recordVersion } from '../record-version.js';
import { readForm } from '../request.js';
import { redirect, sendHtml } from '../respond.js';
import { crossOriginProblem } from '../same-origin.js';
import { ConsoleRefusal, type RouteContext, recordRefOf } from './context.js';
import { readRecord, settleableAt, showRecord, storeNowMs } from './record-route.js';

type Action = 'complete' | 'release';

interface ActionRequest {
  readonly ref: RecordRef;
  readonly action: Action;
  readonly version: string;
  /** The holder the form was shown for (its `fence` and `owner` fields), when both are well-formed. */
  readonly expect: Holder | undefined;
  readonly reason: string;
  readonly outcome: string;
}

/** The holder posted with a form, or undefined when a field is missing or malformed. */
export function postedHolder(fence: string | null, owner: string | null): Holder | undefined {
  if (fence === null || owner === null || owner === '' || !/^[1-9][0-9]{0,15}$/.test(fence)) return undefined;
  const value = Number(fence);
  return Number.isSafeInteger(value) ? { fence: value, owner } : undefined;
}

/** The checked fields of a posted action form. @throws ConsoleRefusal, FormError */
async function actionRequestOf(context: RouteContext): Promise<ActionRequest> {
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
  const action = form.get('action');
  if (action !== 'complete' && action !== 'release') {
    throw new ConsoleRefusal(400, 'Bad request', "The action must be 'complete' or 'release'.");
  }
  return {
    ref,
    action,
    version: form.get('version') ?? '',
    expect: postedHolder(form.get('fence'), form.get('owner')),
    reason: (form.get('reason') ?? '').trim(),
    outcome: form.get('outcome') ?? '',
  };
}

/** Why a typed reason cannot be recorded, or undefined. */
export function reasonProblem(reason: string): string | undefined {
  if (reason === '') return 'Say why: the reason is recorded with your name.';
  if (reason.length > MAX_REASON_LENGTH) return `The reason is longer than ${MAX_REASON_LENGTH} characters.`;
  if (reason.includes('\u0000') || !isWellFormedText(reason))
    return 'The reason has characters no store can keep.';
  return undefined;
}

/** The outcome as JSON, or why it is not JSON. */
function parseOutcome(text: string): { value: unknown; json: string } | { problem: string } {
  if (text.trim() === '')
    return { problem: 'Enter the outcome as JSON (for example {"status": "succeeded"}).' };
  try {
    const value: unknown = JSON.parse(text);
    return { value, json: JSON.stringify(value) };
  } catch (error) {
    return { problem: `The outcome is not valid JSON: ${(error as Error).message}` };
  }
}

/**
 * The record the action applies to, unchanged since the form was shown; otherwise the record page
 * is shown again (409) and undefined returned.
 */
async function unchangedRecord(
  context: RouteContext,
  action: ActionRequest,
): Promise<IdempotencyRecord | undefined> {
  const record = await readRecord(context, action.ref);
  if (record === null) {
    throw new ConsoleRefusal(
      409,
      'Nothing to settle',
      'There is no live record of this key any more: it was settled, released or expired meanwhile.',
    );
  }
  if (
    recordVersion(record) !== action.version ||
    action.expect === undefined ||
    record.fence !== action.expect.fence ||
    record.owner !== action.expect.owner ||
    record.state === 'completed'
  ) {
    await showChanged(context, action);
    return undefined;
  }
  if (record.state === 'in_progress' && !settleableAt(record, await storeNowMs(context, action.ref.tenant))) {
    throw stillRunning(record.owner, record.leaseExpiresAtMs);
  }
  return record;
}

/** 409: the holder renews its lease, so its body may still take effect. */
function stillRunning(owner: string, leaseExpiresAtMs: number): ConsoleRefusal {
  return new ConsoleRefusal(
    409,
    'Still running',
    `This call is still running on ${owner}, its lease live until ${new Date(leaseExpiresAtMs).toISOString()}: its body may still take effect, so nothing was changed. Reload the record when it settles.`,
  );
}

/** The record page again (409): the record changed since the operator opened it. */
async function showChanged(context: RouteContext, action: ActionRequest): Promise<void> {
  const problem =
    'The record changed since you opened it (another operator, or the call itself, settled it, or the key was released and ran again): nothing was changed. Review it again.';
  await showRecord(context, action.ref, 409, {
    again: { action: action.action, outcome: action.outcome, reason: action.reason, problem },
  });
}

/** Checks reason and outcome; shows the record page again (400) with the problem when one is wrong. */
async function checkedInput(
  context: RouteContext,
  action: ActionRequest,
): Promise<{ json: string | undefined; value: unknown } | undefined> {
  const again = (problem: string) =>
    showRecord(context, action.ref, 400, {
      again: { action: action.action, outcome: action.outcome, reason: action.reason, problem },
    });
  const problem = reasonProblem(action.reason);
  if (problem !== undefined) return void (await again(problem));
  if (action.action === 'release') return { json: undefined, value: undefined };
  const parsed = parseOutcome(action.outcome);
  if ('problem' in parsed) return void (await again(parsed.problem));
  return parsed;
}

/** POST /confirm: what the action will do, and the button that does it. */
export async function confirmRoute(context: RouteContext): Promise<void> {
  const action = await actionRequestOf(context);
  const record = await unchangedRecord(context, action);
  if (record === undefined) return;
  const input = await checkedInput(context, action);
  if (input === undefined) return;
  const token = issueFormToken(context.csrf, context.request, context.response, context.operator.id);
  sendHtml(
    context.response,
    200,
    confirmPage(context.frame, {
      action: action.action,
      record,
      outcome: input.json,
      reason: action.reason,
      operatorId: context.operator.id,
      form: { token, version: action.version, holder: { fence: record.fence, owner: record.owner } },
    }),
  );
}

/** POST /resolve: settle the record through the guard, then show it (303). */
export async function resolveRoute(context: RouteContext): Promise<void> {
  const action = await actionRequestOf(context);
  if ((await unchangedRecord(context, action)) === undefined) return;
  const input = await checkedInput(context, action);
  if (input === undefined) return;
  // The store settles only the record the form was shown for (checked in its atomic step).
  const audit = {
    tenant: action.ref.tenant,
    by: context.operator.id,
    reason: action.reason,
    ...(action.expect === undefined ? {} : { expect: action.expect }),
  };
  let result: Awaited<ReturnType<typeof context.options.guard.resolve>>;
  try {
    result = await context.options.guard.resolve(
      action.ref.key,
      action.action === 'release' ? { released: true } : { outcome: input.value },
      audit,
    );
  } catch (error) {
    // The store's own step: the holder renewed its lease after the page's check.
    if (HolderAliveError.isInstance(error)) throw stillRunning(error.owner, error.leaseExpiresAtMs);
    if (OutcomeEncodingError.isInstance(error) || StoreInputError.isInstance(error)) {
      const problem = `The store cannot take this: ${(error as Error).message}`;
      await showRecord(context, action.ref, 400, {
        again: { action: action.action, outcome: action.outcome, reason: action.reason, problem },
      });
      return;
    }
    throw error;
  }
  if (result.status === 'changed') {
    // Re-lived between the version check and the store's step: the store refused, nothing written.
    if (result.record.state !== 'completed') {
      return showChanged(context, action);
    }
    throw new ConsoleRefusal(
      409,
      'The record changed',
      `The record changed since you opened it (it is now ${result.record.state}, another attempt or another run of the call): nothing was changed.`,
    );
  }
  if (result.status !== 'resolved') {
    throw new ConsoleRefusal(
      409,
      'Nothing to settle',
      'The record was settled, released or expired meanwhile: nothing was changed.',
    );
  }
  const done = action.action === 'complete' ? 'completed' : 'released';
  redirect(
    context.response,
    href(context.options.basePath, '/record', { tenant: action.ref.tenant, key: action.ref.key, done }),
  );
}
