// The list: one tab per state (indeterminate first), filters by tenant, tool and age, paged
// with the store's cursor. Shows no outcome and no argument: the store's list has neither.
import type { ListedRecord, ListPage, ListState } from '@toolfence/core';
import { AGE_CHOICES, CONSOLE_STATES, formatAge, formatTime, stateLabel, tabLabel } from '../format.js';
import { href, html, type SafeHtml } from '../html.js';
import { type PageFrame, page } from './layout.js';

/** What the list shows and was asked for. */
export interface ListFilters {
  readonly state: ListState;
  /** Undefined: every tenant (only for an operator of `'*'`). */
  readonly tenant: string | undefined;
  readonly tool: string | undefined;
  readonly olderThanMs: number;
  readonly order: 'oldest' | 'newest';
  readonly cursor: string | undefined;
}

export interface ListView {
  readonly filters: ListFilters;
  /** The tenants the operator may see. */
  readonly tenants: readonly string[] | '*';
  /** Undefined when the store has no `list`. */
  readonly page: ListPage | undefined;
  /** Whether the store keeps approvals (`decideApproval`): without, no call can wait for one. */
  readonly approvals: boolean;
}

function query(filters: ListFilters, changes: Partial<Record<keyof ListFilters, string | undefined>> = {}) {
  return {
    state: filters.state,
    tenant: filters.tenant,
    tool: filters.tool,
    age: filters.olderThanMs === 0 ? undefined : String(filters.olderThanMs),
    order: filters.order === 'oldest' ? undefined : filters.order,
    ...changes,
  };
}

function stateTabs(frame: PageFrame, filters: ListFilters): SafeHtml {
  const tabs = CONSOLE_STATES.map((state) => {
    const current = state === filters.state ? html` aria-current="page"` : '';
    return html`<li><a href="${href(frame.basePath, '/', query(filters, { state, cursor: undefined }))}"${current}>${state === 'awaiting_approval' ? tabLabel(state) : stateLabel(state)}</a></li>`;
  });
  return html`<nav class="states" aria-label="Record state"><ul>${tabs}</ul></nav>`;
}

function tenantField(view: ListView): SafeHtml {
  const { tenants, filters } = view;
  if (tenants === '*') {
    return html`<div class="field"><label for="f-tenant">Tenant</label>
<input id="f-tenant" name="tenant" value="${filters.tenant ?? ''}" placeholder="every tenant" maxlength="256"></div>`;
  }
  const options = tenants.map(
    (tenant) =>
      html`<option value="${tenant}"${tenant === filters.tenant ? html` selected` : ''}>${tenant}</option>`,
  );
  return html`<div class="field"><label for="f-tenant">Tenant</label><select id="f-tenant" name="tenant">${options}</select></div>`;
}

function filterForm(frame: PageFrame, view: ListView): SafeHtml {
  const { filters } = view;
  // An age from the URL that is not one of the choices is shown as itself, so the form never
  // claims a filter other than the one applied.
  const choices = AGE_CHOICES.some((choice) => choice.ms === filters.olderThanMs)
    ? AGE_CHOICES
    : [...AGE_CHOICES, { label: `older than ${formatAge(0, filters.olderThanMs)}`, ms: filters.olderThanMs }];
  const ages = choices.map(
    (choice) =>
      html`<option value="${choice.ms === 0 ? '' : String(choice.ms)}"${choice.ms === filters.olderThanMs ? html` selected` : ''}>${choice.label}</option>`,
  );
  const order = (value: 'oldest' | 'newest', label: string) =>
    html`<option value="${value}"${filters.order === value ? html` selected` : ''}>${label}</option>`;
  return html`<form class="filters" method="get" action="${href(frame.basePath, '/')}" role="search" aria-label="Filter records">
<input type="hidden" name="state" value="${filters.state}">
${tenantField(view)}
<div class="field"><label for="f-tool">Tool</label><input id="f-tool" name="tool" value="${filters.tool ?? ''}" maxlength="256" placeholder="every tool"></div>
<div class="field"><label for="f-age">In this state</label><select id="f-age" name="age">${ages}</select></div>
<div class="field"><label for="f-order">Order</label><select id="f-order" name="order">${order('oldest', 'oldest first')}${order('newest', 'newest first')}</select></div>
<button type="submit">Apply filters</button>
</form>`;
}

function recordRow(frame: PageFrame, record: ListedRecord, nowMs: number): SafeHtml {
  const link = href(frame.basePath, '/record', { tenant: record.tenant, key: record.key });
  const leaseNote =
    record.state === 'in_progress' && record.leaseExpiresAtMs <= nowMs
      ? html` <span class="badge lease_expired">lease expired</span>`
      : '';
  const error =
    record.error === undefined
      ? html`<span class="muted">—</span>`
      : html`<span class="mono">${record.error.type}</span>: ${record.error.message}`;
  return html`<tr>
<td class="text"><a href="${link}">${record.tool}</a><br><span class="mono muted" title="idempotency key">${record.key.slice(0, 16)}…</span></td>
<td class="text nowrap">${record.tenant}</td>
<td class="text">${record.runId ?? '—'}${record.callId === undefined ? '' : html`<br><span class="mono muted">${record.callId}</span>`}</td>
<td class="text">${record.description ?? html`<span class="muted">—</span>`}</td>
<td class="text">${error}</td>
<td class="nowrap">${record.attempt} · ${record.fence}</td>
<td class="nowrap"><span title="${formatTime(record.updatedAtMs)}">${formatAge(record.updatedAtMs, nowMs)}</span>${leaseNote}</td>
</tr>`;
}

function results(frame: PageFrame, view: ListView): SafeHtml {
  const listed = view.page;
  if (view.filters.state === 'awaiting_approval' && !view.approvals) {
    return html`<p class="notice warn" id="no-approvals">This store keeps no approvals (it has no <code>decideApproval</code>): no call of it can wait for one, and a policy that needs one is refused before it runs.</p>`;
  }
  if (listed === undefined) {
    return html`<p class="notice warn">This store cannot list records (it has no <code>list</code>). Open a record by its key below.</p>`;
  }
  if (listed.records.length === 0) {
    return html`<p class="notice ok" role="status">No ${stateLabel(view.filters.state).toLowerCase()} records${view.filters.cursor === undefined ? '' : ' on this page'}.</p>`;
  }
  const rows = listed.records.map((record) => recordRow(frame, record, listed.nowMs));
  return html`<div class="table-wrap"><table>
<caption class="muted">${listed.records.length} ${stateLabel(view.filters.state).toLowerCase()} record(s) on this page, times by the store's clock</caption>
<thead><tr><th scope="col">Tool and key</th><th scope="col">Tenant</th><th scope="col">Run and call</th><th scope="col">Description</th><th scope="col">Error</th><th scope="col">Attempt · fence</th><th scope="col">In state for</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}

function paging(frame: PageFrame, view: ListView): SafeHtml {
  const links: SafeHtml[] = [];
  if (view.filters.cursor !== undefined) {
    links.push(
      html`<a href="${href(frame.basePath, '/', query(view.filters, { cursor: undefined }))}">First page</a>`,
    );
  }
  if (view.page?.cursor !== undefined) {
    links.push(
      html`<a href="${href(frame.basePath, '/', query(view.filters, { cursor: view.page.cursor }))}" rel="next">Next page</a>`,
    );
  }
  return links.length === 0 ? html`` : html`<nav class="paging" aria-label="Pages">${links}</nav>`;
}

function openByKey(frame: PageFrame, view: ListView): SafeHtml {
  const tenant =
    view.tenants === '*'
      ? html`<input id="k-tenant" name="tenant" required maxlength="256" value="${view.filters.tenant ?? ''}">`
      : html`<select id="k-tenant" name="tenant">${view.tenants.map((t) => html`<option value="${t}"${t === view.filters.tenant ? html` selected` : ''}>${t}</option>`)}</select>`;
  return html`<h2>Open a record by its key</h2>
<form class="filters" method="get" action="${href(frame.basePath, '/record')}" aria-label="Open a record by its key">
<div class="field"><label for="k-tenant">Tenant</label>${tenant}</div>
<div class="field"><label for="k-key">Idempotency key</label><input id="k-key" name="key" required maxlength="256" size="66" class="mono"></div>
<button type="submit" class="secondary">Open</button>
</form>`;
}

/** The list page. */
export function listPage(frame: PageFrame, view: ListView): string {
  const intro =
    view.filters.state === 'awaiting_approval'
      ? html`<p class="muted" id="approvals-intro">Calls that asked for an operator's approval before they run: nothing of them ran. Open one to approve it (it runs once) or deny it (it never runs).</p>`
      : '';
  return page(
    frame,
    tabLabel(view.filters.state),
    html`<h1>${tabLabel(view.filters.state)}</h1>
${stateTabs(frame, view.filters)}
${intro}
${filterForm(frame, view)}
${results(frame, view)}
${paging(frame, view)}
${openByKey(frame, view)}`,
  );
}
