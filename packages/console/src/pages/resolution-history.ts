// The resolutions of a key, newest first: who settled it, when, how and why.
import type { ResolutionEntry } from '@toolfence/core';
import { formatTime, stateLabel } from '../format.js';
import { html, type SafeHtml } from '../html.js';

function actionLabel(entry: ResolutionEntry): string {
  return entry.action === 'completed' ? 'it happened (outcome recorded)' : 'it did not happen (released)';
}

/** The history table, or a note when the store keeps none. */
export function resolutionHistory(entries: readonly ResolutionEntry[] | undefined): SafeHtml {
  if (entries === undefined) {
    return html`<h2>Resolution history</h2><p class="muted">This store keeps no resolution history.</p>`;
  }
  if (entries.length === 0) {
    return html`<h2>Resolution history</h2><p class="muted">Nobody has settled this key.</p>`;
  }
  const rows = entries.map(
    (entry) => html`<tr>
<td>${formatTime(entry.atMs)}</td>
<td class="text">${entry.by ?? html`<span class="muted">unknown</span>`}</td>
<td>${actionLabel(entry)}</td>
<td>${stateLabel(entry.fromState)}, attempt ${entry.attempt} · fence ${entry.fence}${entry.forced === true ? html` · <strong>forced over a live holder</strong>` : ''}</td>
<td class="text">${entry.reason ?? html`<span class="muted">—</span>`}</td>
</tr>`,
  );
  return html`<h2>Resolution history</h2>
<div class="table-wrap"><table>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Decision</th><th scope="col">From</th><th scope="col">Why</th></tr></thead>
<tbody>${rows}</tbody>
</table></div>`;
}
