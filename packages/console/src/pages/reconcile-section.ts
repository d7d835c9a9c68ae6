// "Ask the provider" on a record whose outcome is unknown: the tool's reconcile probe is asked
// (nothing is written to the record), its verdict shown, and a `happened` / `not_happened`
// verdict may then settle the record through guard.reconcile (routes/reconcile-route.ts). Every
// form carries the record's version and holder, so it applies only to the record shown.
import type { Holder, IdempotencyRecord } from '@toolfence/core';
import { href, html, type SafeHtml } from '../html.js';

/** The record page's form fields (record-page.ts's FormContext). */
interface FormContext {
  readonly token: string;
  readonly version: string;
  readonly holder: Holder;
}

/** What the probe answered when the operator asked, or why a settlement was refused. */
export interface AskedView {
  /** The probe's verdict: `happened`, `not_happened`, `unknown`, `failed`, `busy`. */
  readonly verdict: string;
  readonly tries: number;
  /** The probe's note (bounded and control-escaped by the guard; HTML-escaped here). */
  readonly detail?: string | undefined;
  /** The type of the last try's error, for `failed`. */
  readonly errorType?: string | undefined;
  /** Why a settlement by the verdict did not happen, in plain words. */
  readonly problem?: string | undefined;
}

const MEANING: Record<string, string> = {
  happened: 'The provider says the effect happened.',
  not_happened: 'The provider says the effect did not happen (and cannot happen later).',
  unknown: 'The provider cannot tell. Decide by hand below.',
  failed: 'The probe failed on every try (an error or its deadline). Decide by hand below.',
  busy: 'Another worker is asking the provider about this record right now. Reload in a moment.',
};

function hidden(
  form: FormContext,
  tenant: string,
  key: string,
  step: 'ask' | 'settle',
  verdict?: string,
): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${form.token}">
<input type="hidden" name="tenant" value="${tenant}">
<input type="hidden" name="key" value="${key}">
<input type="hidden" name="version" value="${form.version}">
<input type="hidden" name="fence" value="${form.holder.fence}">
<input type="hidden" name="owner" value="${form.holder.owner}">
<input type="hidden" name="step" value="${step}">
${verdict === undefined ? '' : html`<input type="hidden" name="verdict" value="${verdict}">`}`;
}

function answer(
  asked: AskedView,
  form: FormContext,
  tenant: string,
  key: string,
  basePath: string,
): SafeHtml {
  const meaning = MEANING[asked.verdict] ?? 'The probe gave no verdict.';
  const settleable = asked.verdict === 'happened' || asked.verdict === 'not_happened';
  const effect =
    asked.verdict === 'happened'
      ? 'The record is completed with the outcome the probe returns: the next replay gets it.'
      : 'The record is released: the next replay runs the tool again, once.';
  return html`<div id="probe-answer" role="status">
<p class="notice ${settleable ? 'ok' : 'warn'}"><strong>Verdict: <span class="mono">${asked.verdict}</span></strong> (${asked.tries} ${asked.tries === 1 ? 'try' : 'tries'}). ${meaning} Nothing was written.</p>
${asked.detail === undefined ? '' : html`<p>The probe said: <q class="text" id="probe-detail">${asked.detail}</q></p>`}
${asked.errorType === undefined ? '' : html`<p class="muted">Last error: <span class="mono text">${asked.errorType}</span></p>`}
${asked.problem === undefined ? '' : html`<p class="notice bad" role="alert" id="problem-settle">${asked.problem}</p>`}
${
  settleable && asked.problem === undefined
    ? html`<form method="post" action="${href(basePath, '/reconcile')}">
${hidden(form, tenant, key, 'settle', asked.verdict)}
<p>${effect} The provider is asked again; the record is settled only if it gives the same answer and the record still has the holder shown (recorded by <span class="mono">reconcile</span>, with the probe's words).</p>
<div class="row"><button type="submit" id="settle-by-answer">Settle by this answer</button></div>
</form>`
    : ''
}
</div>`;
}

/**
 * The "Ask the provider" section of a settleable record: the button when the tool's policy has
 * a probe (`hasProbe`), else a line saying why there is none.
 */
export function reconcileSection(
  record: IdempotencyRecord,
  form: FormContext,
  view: { tenant: string; key: string; hasProbe: boolean; asked: AskedView | undefined },
  basePath: string,
): SafeHtml {
  if (!view.hasProbe) {
    return html`<p class="muted" id="no-probe">No “Ask the provider” here: the console was given no reconcile probe for <span class="text">${record.tool}</span> (its policy in the console's <code>policies</code> has no <code>reconcile</code>). Check the provider yourself.</p>`;
  }
  return html`<h2>Ask the provider</h2>
<p>Run the reconcile probe of <span class="text">${record.tool}</span>: it asks the system the tool acts on whether this call's effect happened, by its idempotency key. Asking writes nothing to the record.</p>
${view.asked === undefined ? '' : answer(view.asked, form, view.tenant, view.key, basePath)}
<form method="post" action="${href(basePath, '/reconcile')}">
${hidden(form, view.tenant, view.key, 'ask')}
<div class="row"><button type="submit" class="secondary" id="ask-provider">${view.asked === undefined ? 'Ask the provider' : 'Ask again'}</button></div>
</form>`;
}
