// How the CLI prints: readable tables by default, one JSON object per line with --json.
import type { IdempotencyRecord, ListedRecord, ResolutionEntry } from '@toolfence/core';
import { formatAge } from './durations.js';
import { visible } from './escape.js';

/**
 * Where the CLI writes. Every line is masked of secrets; human lines (`out`, `err`) have their
 * control characters escaped; `json` writes one exact JSON object per line.
 */
export interface Output {
  out(line: string): void;
  err(line: string): void;
  json(value: unknown): void;
}

/** A table with a header row, columns padded to their widest cell (the last one is not padded). */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** What the state column shows: `lease_expired` for an in-progress record past its lease. */
export function shownState(record: ListedRecord, nowMs: number): string {
  if (record.state === 'in_progress' && record.leaseExpiresAtMs <= nowMs) return 'lease_expired';
  return record.state;
}

/** "still running on OWNER since …, lease live until …": a live holder, as the operator is told. */
export function holderNote(holder: {
  readonly owner: string;
  readonly claimedAtMs?: number | undefined;
  readonly leaseExpiresAtMs: number;
}): string {
  const since = holder.claimedAtMs === undefined ? '' : ` since ${iso(holder.claimedAtMs)}`;
  return `still running on ${visible(holder.owner)}${since}, lease live until ${iso(holder.leaseExpiresAtMs)}`;
}

/** What the last column says of an in-progress record: its holder, alive or gone. */
function inProgressNote(record: ListedRecord, nowMs: number): string {
  if (record.leaseExpiresAtMs > nowMs) return holderNote(record);
  return `holder ${visible(record.owner)} gone: lease expired ${iso(record.leaseExpiresAtMs)}; settleable with --fence ${record.fence} --owner ${visible(record.owner)}`;
}

/** Rows of `toolfence list`: every cell from the store shown as text (escape.ts). */
export function listRows(records: readonly ListedRecord[], nowMs: number, withTenant: boolean): string[][] {
  return records.map((record) => [
    shownState(record, nowMs),
    formatAge(nowMs - (record.updatedAtMs ?? nowMs)),
    record.claimedAtMs === undefined ? '-' : formatAge(nowMs - record.claimedAtMs),
    ...(withTenant ? [visible(record.tenant)] : []),
    visible(record.tool),
    visible(record.key),
    String(record.attempt),
    record.runId === undefined ? '-' : visible(record.runId),
    record.description === undefined ? '-' : visible(record.description),
    record.error !== undefined
      ? `${visible(record.error.type)}: ${shorten(visible(record.error.message), 60)}`
      : record.state === 'in_progress'
        ? inProgressNote(record, nowMs)
        : '-',
  ]);
}

/**
 * IN_STATE: time since the record entered its current state (the claim of an in-progress one, the
 * settlement of the others); SINCE_CLAIM: time since its current attempt claimed the key.
 */
export const LIST_HEADER = [
  'STATE',
  'IN_STATE',
  'SINCE_CLAIM',
  'TOOL',
  'KEY',
  'ATTEMPT',
  'RUN',
  'DESCRIPTION',
  'ERROR',
];
export const LIST_HEADER_ALL_TENANTS = [...LIST_HEADER.slice(0, 3), 'TENANT', ...LIST_HEADER.slice(3)];

function shorten(text: string, max: number): string {
  // Cut on a code point, never inside an escape's backslash pair.
  const points = Array.from(text);
  if (points.length <= max) return text;
  let cut = points.slice(0, max - 1).join('');
  if (/(^|[^\\])(\\\\)*\\$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

/** Where a command read: the store (masked), the namespace and the tenant. */
export interface Place {
  readonly store: string;
  readonly namespace: string;
  readonly tenant: string;
}

/** `toolfence inspect`: the record (outcome included) and its resolution history, a field a line. */
export function inspectLines(
  key: string,
  place: Place,
  record: IdempotencyRecord | null,
  history: readonly ResolutionEntry[],
  /** The store's clock, to tell a live holder from a gone one (in-progress records). */
  nowMs?: number,
): string[] {
  const text = (value: string | undefined) => (value === undefined ? '-' : visible(value));
  const lines = [
    `key       ${visible(key)}`,
    `tenant    ${visible(place.tenant)}`,
    `store     ${place.store} ${visible(place.namespace)}`,
  ];
  if (record === null) {
    lines.push('record    none (never claimed, released, forgotten, or past its retention)');
  } else {
    lines.push(
      `state     ${record.state}`,
      ...(record.state === 'in_progress' && nowMs !== undefined
        ? [
            record.leaseExpiresAtMs > nowMs
              ? `running   ${holderNote(record)}: not settleable while it runs (its body may still take effect)`
              : `running   no: holder gone, lease expired ${iso(record.leaseExpiresAtMs)}; settle it with --fence ${record.fence} --owner ${text(record.owner)}`,
          ]
        : []),
      `tool      ${text(record.tool)}`,
      `attempt   ${record.attempt} (fence ${record.fence})`,
      `holder    --fence ${record.fence} --owner ${text(record.owner)}`,
      `run       ${text(record.runId)}`,
      `call      ${text(record.callId)}`,
      `describe  ${text(record.description)}`,
      ...(record.codec === undefined ? [] : [`codec     ${text(record.codec)}`]),
      // The operator's own words: escaped like every field read from the store.
      ...(record.approval === undefined
        ? []
        : [
            `approval  ${record.approval.approved ? 'approved' : 'denied'} by ${text(record.approval.by)} at ${iso(record.approval.atMs)}: ${text(record.approval.reason)}`,
          ]),
      `claimed   ${iso(record.claimedAtMs)}`,
      `updated   ${iso(record.updatedAtMs)}`,
      `lease     ${iso(record.leaseExpiresAtMs)}`,
      `expires   ${iso(record.expiresAtMs)}`,
      ...(record.retentionMs === undefined
        ? []
        : [
            `retention ${formatAge(record.retentionMs)} (the call's: a resolve or release keeps the record that long unless --retention says otherwise)`,
          ]),
    );
    if (record.error !== undefined)
      lines.push(`error     ${text(record.error.type)}: ${text(record.error.message)}`);
    if (record.outcome !== undefined) lines.push(`outcome   ${text(record.outcome)}`);
  }
  if (history.length === 0) {
    lines.push('resolved  never');
  } else {
    lines.push('resolutions (newest first):');
    for (const entry of history) {
      const who = entry.by === undefined ? '' : ` by ${text(entry.by)}`;
      const why = entry.reason === undefined ? '' : `: ${text(entry.reason)}`;
      const forced = entry.forced === true ? ', FORCED over a live holder' : '';
      lines.push(
        `  ${iso(entry.atMs)}  ${entry.action} (was ${entry.fromState}, attempt ${entry.attempt}${forced})${who}${why}`,
      );
    }
  }
  return lines;
}
