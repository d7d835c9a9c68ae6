// The confirmation of an action: what will be recorded, and what the next replay of the run gets.
import type { IdempotencyRecord } from '@toolfence/core';
import { formatDuration } from '../format.js';
import { href, html, type SafeHtml } from '../html.js';
import { type PageFrame, page } from './layout.js';
import type { FormContext } from './record-page.js';

export interface ConfirmView {
  readonly action: 'complete' | 'release';
  readonly record: IdempotencyRecord;
  /** The outcome as JSON text, normalised (`complete` only). */
  readonly outcome: string | undefined;
  readonly reason: string;
  readonly operatorId: string;
  readonly form: FormContext;
}

function summary(record: IdempotencyRecord): SafeHtml {
  return html`<dl class="facts">
<dt>Tool</dt><dd class="text">${record.tool}</dd>
<dt>Tenant</dt><dd class="text">${record.tenant}</dd>
<dt>Run</dt><dd class="text">${record.runId ?? '—'}</dd>
<dt>Description</dt><dd class="text">${record.description ?? '—'}</dd>
<dt>Idempotency key</dt><dd class="mono text">${record.key}</dd>
</dl>`;
}

function consequence(view: ConfirmView): SafeHtml {
  const { record } = view;
  const run =
    record.runId === undefined
      ? 'The next replay of this call'
      : html`The next replay of run <strong class="text">${record.runId}</strong>`;
  if (view.action === 'complete') {
    return html`<p>${run} gets this outcome, and <span class="text">${record.tool}</span> does not run again:</p>
<pre class="text" aria-label="Outcome the replay gets">${JSON.stringify(JSON.parse(view.outcome ?? 'null'), null, 2)}</pre>`;
  }
  return html`<p>The record is released. ${run} runs <span class="text">${record.tool}</span> again, once.</p>
<p class="notice bad"><strong>If the effect did happen, it happens twice.</strong> Release only after checking that it did not.</p>`;
}

/** How long the decision is kept: the retention the call was claimed with. */
function keptFor(record: IdempotencyRecord): SafeHtml {
  if (record.retentionMs === undefined) {
    return html`<p id="retention">Kept for the guard's default retention (this store does not report the call's own).</p>`;
  }
  return html`<p id="retention">Kept for ${formatDuration(record.retentionMs)} after this decision: the retention this call was claimed with. After it, the record is gone and the call may run again.</p>`;
}

/** The confirmation page of `view.action`. */
export function confirmPage(frame: PageFrame, view: ConfirmView): string {
  const { record, form } = view;
  const title = view.action === 'complete' ? 'Confirm: it happened' : 'Confirm: it did not happen';
  const button =
    view.action === 'complete'
      ? html`<button type="submit">Record the outcome</button>`
      : html`<button type="submit" class="danger">Release the call</button>`;
  const back = href(frame.basePath, '/record', { tenant: record.tenant, key: record.key });
  return page(
    frame,
    title,
    html`<h1>${title}</h1>
${summary(record)}
<h2>What happens next</h2>
${consequence(view)}
${keptFor(record)}
<p>Recorded as settled by <strong class="text">${view.operatorId}</strong>, because: <span class="text">${view.reason}</span></p>
<form method="post" action="${href(frame.basePath, '/resolve')}">
<input type="hidden" name="csrf" value="${form.token}">
<input type="hidden" name="tenant" value="${record.tenant}">
<input type="hidden" name="key" value="${record.key}">
<input type="hidden" name="version" value="${form.version}">
<input type="hidden" name="fence" value="${form.holder.fence}">
<input type="hidden" name="owner" value="${form.holder.owner}">
<input type="hidden" name="action" value="${view.action}">
<input type="hidden" name="reason" value="${view.reason}">
${view.action === 'complete' ? html`<input type="hidden" name="outcome" value="${view.outcome ?? ''}">` : ''}
<div class="row">${button} <a href="${back}">Back, change nothing</a></div>
</form>`,
  );
}
