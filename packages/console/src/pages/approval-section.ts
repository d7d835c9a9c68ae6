// A call that waits for an operator's approval: what it is, what approving can and cannot do, and
// the two decisions. Each form carries the record's version and the request's owner, so the
// decision applies only to the request the operator looked at (routes/decide-route.ts).
import type { IdempotencyRecord } from '@toolfence/core';
import { formatTime } from '../format.js';
import { href, html, type SafeHtml } from '../html.js';

/** The fields a decision form carries besides what the operator types. */
export interface DecideForm {
  readonly token: string;
  readonly version: string;
  readonly tenant: string;
  readonly key: string;
}

/** What the operator had typed, shown again with the reason it was refused. */
export interface DecideAgain {
  readonly action: 'approve' | 'deny';
  readonly reason: string;
  readonly problem: string;
}

/** True for the states an operator decides on here: a request, or an approval not used yet (revoked by a denial). */
export function isDecidable(record: IdempotencyRecord): boolean {
  return record.state === 'awaiting_approval' || record.state === 'approved';
}

function who(record: IdempotencyRecord): SafeHtml {
  const entry = record.approval;
  if (entry === undefined) return html``;
  return html` by <span class="text">${entry.by ?? 'an operator'}</span> at ${formatTime(entry.atMs)}${entry.reason === undefined ? '' : html` (“<span class="text">${entry.reason}</span>”)`}`;
}

/** What the record's approval state means, above its actions. */
export function approvalNote(record: IdempotencyRecord): SafeHtml {
  if (record.state === 'awaiting_approval') {
    return html`<p class="notice warn" id="approval-state">This call waits for an operator's approval: nothing of it ran. Its run stopped and asks again when it resumes.</p>`;
  }
  if (record.state === 'approved') {
    return html`<p class="notice ok" id="approval-state">Approved${who(record)}. Not used yet: the next call with these arguments runs it once. You can still deny it (revoke the approval) until then.</p>`;
  }
  if (record.state === 'denied') {
    return html`<p class="notice bad" id="approval-state">Denied${who(record)}: it did not run, and every repeat, resume or replay of it is denied.</p>`;
  }
  if (record.approval?.approved === true) {
    return html`<p class="muted" id="approval-state">It ran on an approval${who(record)}; the approval was used by this record's first attempt.</p>`;
  }
  return html``;
}

function hidden(form: DecideForm, decision: 'approve' | 'deny'): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${form.token}">
<input type="hidden" name="tenant" value="${form.tenant}">
<input type="hidden" name="key" value="${form.key}">
<input type="hidden" name="version" value="${form.version}">
<input type="hidden" name="decision" value="${decision}">`;
}

function problemFor(again: DecideAgain | undefined, action: 'approve' | 'deny'): SafeHtml {
  if (again === undefined || again.action !== action) return html``;
  return html`<p class="notice bad" role="alert" id="problem-${action}">${again.problem}</p>`;
}

/** The Approve and Deny forms (Approve only for a request: an approval stands until it is used). */
export function decideForms(
  record: IdempotencyRecord,
  form: DecideForm,
  basePath: string,
  again: DecideAgain | undefined,
): SafeHtml {
  const run = record.runId === undefined ? 'its run' : html`run <span class="text">${record.runId}</span>`;
  const reason = (action: 'approve' | 'deny') => (again?.action === action ? again.reason : '');
  const approve =
    record.state !== 'awaiting_approval'
      ? ''
      : html`<section aria-labelledby="approve-title">
<h2 id="approve-title">Approve</h2>
<p>The call may run <strong>once</strong>, with exactly the arguments it asked with, when ${run} calls it again. It does not run now; a second use of the approval (a replay, a resume elsewhere) gets the first run's outcome. It approves nothing else: other arguments, another call or another tenant still need their own approval.</p>
<form method="post" action="${href(basePath, '/decide')}">
${hidden(form, 'approve')}
${problemFor(again, 'approve')}
<label for="reason-approve">Why (recorded with your name)</label>
<input id="reason-approve" name="reason" required maxlength="1024" size="60" value="${reason('approve')}">
<div class="row"><button type="submit">Approve: let it run once</button></div>
</form>
</section>`;
  return html`<h2>Decide</h2>
<p>Check what <span class="text">${record.tool}</span> would do (the description above says what the application asked for) before you decide.</p>
<div class="actions">
${approve}
<section aria-labelledby="deny-title">
<h2 id="deny-title">Deny</h2>
<p>The call never runs: ${run} and every repeat of it are told it was denied.${record.state === 'approved' ? ' This revokes the approval, which was not used yet.' : ''}</p>
<form method="post" action="${href(basePath, '/decide')}">
${hidden(form, 'deny')}
${problemFor(again, 'deny')}
<label for="reason-deny">Why (recorded with your name)</label>
<input id="reason-deny" name="reason" required maxlength="1024" size="60" value="${reason('deny')}">
<div class="row"><button type="submit" class="secondary">Deny: it never runs</button></div>
</form>
</section>
</div>`;
}

/** The notice after a decision (`done=approved` / `denied`). */
export function decidedNotice(done: string | undefined): SafeHtml {
  if (done === 'approved')
    return html`<p class="notice ok" role="status">Approved: the call runs once, when its run calls it again.</p>`;
  if (done === 'denied') return html`<p class="notice ok" role="status">Denied: the call will not run.</p>`;
  return html``;
}
