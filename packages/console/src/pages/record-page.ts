// A record's detail: what the call was (never its arguments), why it stopped, what an operator
// may do with it, and who settled it before.
import type { Holder, IdempotencyRecord, ResolutionEntry } from '@toolfence/core';
import { formatDuration, formatTime, stateLabel } from '../format.js';
import { href, html, type SafeHtml } from '../html.js';
import type { OutcomeExample } from '../outcome-shape.js';
import {
  approvalNote,
  type DecideAgain,
  decidedNotice,
  decideForms,
  isDecidable,
} from './approval-section.js';
import { type PageFrame, page } from './layout.js';
import { type AskedView, reconcileSection } from './reconcile-section.js';
import { resolutionHistory } from './resolution-history.js';

/** The fields the two action forms carry besides what the operator types. */
export interface FormContext {
  readonly token: string;
  /** The record's version when the page was shown (actions.ts): an action on a changed record is refused. */
  readonly version: string;
  /**
   * The record's holder when the page was shown: the store resolves only a record that still has
   * it, in its own atomic step (`resolution.expect`), whatever happened after the version check.
   */
  readonly holder: Holder;
}

/** What the operator had typed, shown again with the reason it was refused. */
export interface FormAgain {
  readonly action: 'complete' | 'release';
  readonly outcome: string;
  readonly reason: string;
  readonly problem: string;
}

export interface RecordView {
  readonly tenant: string;
  readonly key: string;
  readonly record: IdempotencyRecord | null;
  /** Undefined when the store keeps no resolutions. */
  readonly resolutions: readonly ResolutionEntry[] | undefined;
  readonly form: FormContext | undefined;
  /** A notice after an action: `completed`, `released`. */
  readonly done?: string | undefined;
  readonly again?: FormAgain | undefined;
  /** A refused decision (approve / deny), shown again with its problem. */
  readonly decideAgain?: DecideAgain | undefined;
  /** Whether the store keeps approvals (`decideApproval`): the decision forms need it. */
  readonly approvals?: boolean | undefined;
  /** The store's clock when an in-progress record was read: is its holder alive or gone? */
  readonly nowMs?: number | undefined;
  /** The shape of the tool's recorded outcomes, beside the outcome field (outcome-shape.ts). */
  readonly outcomeExample?: OutcomeExample | undefined;
  /** Whether the console has a reconcile probe for the record's tool (its `policies`). */
  readonly hasProbe?: boolean | undefined;
  /** What the probe answered when the operator asked the provider. */
  readonly asked?: AskedView | undefined;
}

function facts(record: IdempotencyRecord): SafeHtml {
  const state = html`<span class="badge ${record.state}">${stateLabel(record.state)}</span>`;
  const row = (label: string, value: SafeHtml | string | number | undefined, mono = false) =>
    html`<dt>${label}</dt><dd class="text${mono ? ' mono' : ''}">${value === undefined || value === '' ? html`<span class="muted">—</span>` : value}</dd>`;
  return html`<dl class="facts">
${row('State', state)}
${row('Tool', record.tool)}
${row('Tenant', record.tenant)}
${row('Description', record.description)}
${row('Run', record.runId)}
${row('Call id', record.callId, true)}
${record.codec === undefined ? '' : row('Outcome codec', record.codec, true)}
${row('Attempt', record.attempt)}
${row('Fence', record.fence)}
${row('Claimed', formatTime(record.claimedAtMs))}
${row('In this state since', formatTime(record.updatedAtMs))}
${record.state === 'in_progress' ? row('Lease until', formatTime(record.leaseExpiresAtMs)) : ''}
${record.state === 'awaiting_approval' ? row('Asked by', record.owner, true) : ''}
${row('Kept until', formatTime(record.expiresAtMs))}
${record.retentionMs === undefined ? '' : row('Retention', `${formatDuration(record.retentionMs)} after it settles (the call’s; a decision here keeps it)`)}
${row('Idempotency key', record.key, true)}
</dl>`;
}

function errorBlock(record: IdempotencyRecord): SafeHtml {
  if (record.error === undefined) return html``;
  return html`<h2>Why it stopped</h2>
<p><span class="mono">${record.error.type}</span></p>
<pre class="text">${record.error.message}</pre>`;
}

function hidden(view: RecordView, form: FormContext, action: 'complete' | 'release'): SafeHtml {
  return html`<input type="hidden" name="csrf" value="${form.token}">
<input type="hidden" name="tenant" value="${view.tenant}">
<input type="hidden" name="key" value="${view.key}">
<input type="hidden" name="version" value="${form.version}">
<input type="hidden" name="fence" value="${form.holder.fence}">
<input type="hidden" name="owner" value="${form.holder.owner}">
<input type="hidden" name="action" value="${action}">`;
}

function problemFor(view: RecordView, action: 'complete' | 'release'): SafeHtml {
  const again = view.again;
  if (again === undefined || again.action !== action) return html``;
  return html`<p class="notice bad" role="alert" id="problem-${action}">${again.problem}</p>`;
}

/** What the tool's outcomes look like: keys and types of its newest completed call, never values. */
function outcomeShape(view: RecordView, record: IdempotencyRecord): SafeHtml {
  const example = view.outcomeExample;
  if (example === undefined) {
    return html`<p id="outcome-shape" class="muted">No completed call of <span class="text">${record.tool}</span> in this tenant to show the shape of its outcome: enter what the tool returns.</p>`;
  }
  const source = example.byOperator ? 'stated by an operator for' : 'returned by';
  return html`<p id="outcome-shape" class="muted">Outcomes of <span class="text">${record.tool}</span> look like <code class="text">${example.shape}</code> (the top-level keys and types ${source} its newest completed call in this tenant, ${formatTime(example.completedAtMs)}; values are not shown).</p>`;
}

function actions(view: RecordView, record: IdempotencyRecord, form: FormContext, basePath: string): SafeHtml {
  const again = view.again;
  const run = record.runId === undefined ? 'the run' : html`run <span class="text">${record.runId}</span>`;
  return html`<h2>Settle it</h2>
<p>Check the system <span class="text">${record.tool}</span> acts on (the payment provider, the booking system) first. Each choice asks you to confirm.</p>
<div class="actions">
<section aria-labelledby="happened-title">
<h2 id="happened-title">It happened</h2>
<p>The effect took place. Enter the result the tool returned; the next replay of ${run} gets it instead of running the tool.</p>
<form method="post" action="${href(basePath, '/confirm')}">
${hidden(view, form, 'complete')}
${problemFor(view, 'complete')}
<label for="outcome">Outcome (JSON)</label>
<textarea id="outcome" name="outcome" required spellcheck="false" aria-describedby="outcome-shape outcome-help">${again?.action === 'complete' ? again.outcome : ''}</textarea>
${outcomeShape(view, record)}
<p id="outcome-help" class="muted">Any JSON value, e.g. <code>{"refundId": "re_123", "status": "succeeded"}</code>.</p>
<label for="reason-complete">Why (recorded with your name)</label>
<input id="reason-complete" name="reason" required maxlength="1024" size="60" value="${again?.action === 'complete' ? again.reason : ''}">
<div class="row"><button type="submit">Review: it happened</button></div>
</form>
</section>
<section aria-labelledby="not-happened-title">
<h2 id="not-happened-title">It did not happen</h2>
<p>The effect did not take place. The record is released: the next replay of ${run} runs the tool again, once.</p>
<form method="post" action="${href(basePath, '/confirm')}">
${hidden(view, form, 'release')}
${problemFor(view, 'release')}
<label for="reason-release">Why (recorded with your name)</label>
<input id="reason-release" name="reason" required maxlength="1024" size="60" value="${again?.action === 'release' ? again.reason : ''}">
<div class="row"><button type="submit" class="secondary">Review: it did not happen</button></div>
</form>
</section>
</div>`;
}

function stateNote(record: IdempotencyRecord): SafeHtml {
  // The approval states have no holder: approvalNote says what they mean.
  if (record.state === 'awaiting_approval' || record.state === 'approved' || record.state === 'denied') {
    return html``;
  }
  if (record.state === 'completed') {
    return html`<p class="notice ok">Completed: a replay gets the recorded outcome${record.resolution?.by === undefined ? '' : html`, stated by <span class="text">${record.resolution.by}</span>`}.</p>`;
  }
  return html`<p class="notice warn" id="holder-alive">Still running on <span class="mono text">${record.owner}</span>${record.claimedAtMs === undefined ? '' : ` since ${formatTime(record.claimedAtMs)}`}, lease live until ${formatTime(record.leaseExpiresAtMs)}. Its caller may have been answered already (a timeout), but its body may still take effect, so it cannot be settled now: reload this page when it settles (its outcome is then recorded, or it turns indeterminate).</p>`;
}

/** An in-progress record whose holder is gone: said above the actions. */
function goneHolderNote(record: IdempotencyRecord): SafeHtml {
  if (record.state !== 'in_progress') return html``;
  return html`<p class="notice warn" id="holder-gone">Its holder <span class="mono text">${record.owner}</span> is gone: its lease expired at ${formatTime(record.leaseExpiresAtMs)} and it stopped renewing (a worker killed mid-call). Nothing runs it now; what it did is unknown until you check.</p>`;
}

function doneNotice(done: string | undefined): SafeHtml {
  if (done === 'completed')
    return html`<p class="notice ok" role="status">Recorded: it happened. The next replay gets the outcome you entered.</p>`;
  if (done === 'released')
    return html`<p class="notice ok" role="status">Released: it did not happen. The next replay runs the tool once.</p>`;
  if (done === 'reconciled')
    return html`<p class="notice ok" role="status" id="reconciled">Settled by the provider's answer (recorded by reconcile, see the history).</p>`;
  return html``;
}

/** The record page. */
export function recordPage(frame: PageFrame, view: RecordView): string {
  const { record } = view;
  const settleable =
    record !== null &&
    (record.state === 'indeterminate' ||
      record.state === 'abandoned' ||
      (record.state === 'in_progress' && view.nowMs !== undefined && record.leaseExpiresAtMs <= view.nowMs));
  const body =
    record === null
      ? html`<h1>No live record</h1>
<p class="notice warn">There is no live record of this key in tenant <span class="text">${view.tenant}</span>: it was released, or its retention ran out, or it was forgotten.</p>
<p class="mono text">${view.key}</p>`
      : html`<h1><span class="text">${record.tool}</span> <span class="badge ${record.state}">${stateLabel(record.state)}</span></h1>
${doneNotice(view.done)}${decidedNotice(view.done)}
${approvalNote(record)}
${facts(record)}
${errorBlock(record)}
${settleable ? goneHolderNote(record) : ''}
${settleable && view.form !== undefined ? reconcileSection(record, view.form, { tenant: view.tenant, key: view.key, hasProbe: view.hasProbe === true, asked: view.asked }, frame.basePath) : ''}
${settleable && view.form !== undefined ? actions(view, record, view.form, frame.basePath) : settleable ? '' : stateNote(record)}
${isDecidable(record) && view.form !== undefined && view.approvals === true ? decideForms(record, { token: view.form.token, version: view.form.version, tenant: view.tenant, key: view.key }, frame.basePath, view.decideAgain) : ''}`;
  return page(
    frame,
    record === null ? 'No live record' : record.tool,
    html`${record === null ? doneNotice(view.done) : ''}${body}
${resolutionHistory(view.resolutions)}
<p><a href="${href(frame.basePath, '/', { tenant: view.tenant })}">Back to the list</a></p>`,
  );
}
