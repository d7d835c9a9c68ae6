// GET /record?tenant=&key= : one record, its actions and its resolution history.
import type { IdempotencyRecord, PolicyMap, Reconcile, RecordRef, ResolutionEntry } from '@toolfence/core';
import { issueFormToken } from '../csrf.js';
import { outcomeExample } from '../outcome-shape.js';
import type { DecideAgain } from '../pages/approval-section.js';
import type { AskedView } from '../pages/reconcile-section.js';
import { type FormAgain, recordPage } from '../pages/record-page.js';
import { recordVersion } from '../record-version.js';
import { sendHtml } from '../respond.js';
import { ConsoleRefusal, type RouteContext, recordRefOf } from './context.js';

/** The live record of `ref`, or null; a record of another tenant or key (a store bug) is null. */
export async function readRecord(context: RouteContext, ref: RecordRef): Promise<IdempotencyRecord | null> {
  const record = await context.options.store.get(ref);
  if (record === null || record.tenant !== ref.tenant || record.key !== ref.key) return null;
  return record;
}

async function readResolutions(
  context: RouteContext,
  ref: RecordRef,
): Promise<readonly ResolutionEntry[] | undefined> {
  const { store } = context.options;
  if (typeof store.resolutions !== 'function') return undefined;
  const entries = await store.resolutions(ref);
  return entries.filter((entry) => entry.tenant === ref.tenant && entry.key === ref.key);
}

/**
 * The store's clock (a listing's `nowMs`), to tell a live holder from a gone one; the host's clock
 * for a store that cannot list (the page then says so only approximately).
 */
export async function storeNowMs(context: RouteContext, tenant: string): Promise<number> {
  const { store } = context.options;
  if (typeof store.list !== 'function') return Date.now();
  return (await store.list({ tenant, states: ['in_progress'], limit: 1 })).nowMs;
}

/**
 * Whether an operator may settle `record` now: indeterminate, abandoned, or in progress under a
 * lease that expired (its holder is gone). A live holder's body may still take effect.
 */
export function settleableAt(record: IdempotencyRecord, nowMs: number | undefined): boolean {
  if (record.state === 'indeterminate' || record.state === 'abandoned') return true;
  return record.state === 'in_progress' && nowMs !== undefined && record.leaseExpiresAtMs <= nowMs;
}

/** The reconcile probe the console was given for `tool` (own properties of `policies` only), or undefined. */
export function probeFor(policies: PolicyMap | undefined, tool: string): Reconcile | undefined {
  if (policies === undefined || !Object.hasOwn(policies, tool)) return undefined;
  return (policies as Record<string, { reconcile?: Reconcile } | undefined>)[tool]?.reconcile ?? undefined;
}

/** Renders the record page of `ref` with `status` (also used to show a refused action again). */
export async function showRecord(
  context: RouteContext,
  ref: RecordRef,
  status: number,
  extra: {
    done?: string | undefined;
    again?: FormAgain | undefined;
    decideAgain?: DecideAgain | undefined;
    asked?: AskedView | undefined;
  } = {},
): Promise<void> {
  const [record, resolutions] = await Promise.all([readRecord(context, ref), readResolutions(context, ref)]);
  if (record === null && (resolutions === undefined || resolutions.length === 0)) {
    throw new ConsoleRefusal(404, 'Not found', 'There is no record of this key in this tenant.');
  }
  const nowMs = record?.state === 'in_progress' ? await storeNowMs(context, ref.tenant) : undefined;
  const settleable = record !== null && settleableAt(record, nowMs);
  const example = settleable
    ? await outcomeExample(context.options.store, ref.tenant, record.tool, context.options.onError)
    : undefined;
  const form =
    record === null
      ? undefined
      : {
          token: issueFormToken(context.csrf, context.request, context.response, context.operator.id),
          version: recordVersion(record),
          holder: { fence: record.fence, owner: record.owner },
        };
  sendHtml(
    context.response,
    status,
    recordPage(context.frame, {
      tenant: ref.tenant,
      key: ref.key,
      record,
      resolutions,
      form,
      nowMs,
      outcomeExample: example,
      approvals: typeof context.options.store.decideApproval === 'function',
      hasProbe: record !== null && probeFor(context.options.policies, record.tool) !== undefined,
      ...extra,
    }),
  );
}

/** Answers the record page. */
export async function recordRoute(context: RouteContext): Promise<void> {
  const { query } = context.route;
  const ref = recordRefOf(context.operator, query.get('tenant'), query.get('key'));
  const done = query.get('done');
  await showRecord(context, ref, 200, {
    done:
      done === 'completed' ||
      done === 'released' ||
      done === 'approved' ||
      done === 'denied' ||
      done === 'reconciled'
        ? done
        : undefined,
  });
}
