// How the CLI prints: readable tables by default, one JSON object per line with --json.
import type { IdempotencyRecord, ListedRecord, ResolutionEntry } from '@toolfence/core';
import { formatAge } from './durations.js';

/** Where the CLI writes; every line goes through the masking of secrets. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
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

/** Rows of `toolfence list`. */
export function listRows(records: readonly ListedRecord[], nowMs: number, withTenant: boolean): string[][] {
  return records.map((record) => [
    shownState(record, nowMs),
    formatAge(nowMs - (record.updatedAtMs ?? nowMs)),
    ...(withTenant ? [record.tenant] : []),
    record.tool,
    record.key,
    String(record.attempt),
    record.runId ?? '-',
    record.description ?? '-',
    record.error === undefined ? '-' : `${record.error.type}: ${oneLine(record.error.message, 60)}`,
  ]);
}

export const LIST_HEADER = ['STATE', 'AGE', 'TOOL', 'KEY', 'ATTEMPT', 'RUN', 'DESCRIPTION', 'ERROR'];
export const LIST_HEADER_ALL_TENANTS = [
  'STATE',
  'AGE',
  'TENANT',
  'TOOL',
  'KEY',
  'ATTEMPT',
  'RUN',
  'DESCRIPTION',
  'ERROR',
];

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

/** `toolfence inspect`: the record (outcome included) and its resolution history. */
export function inspectLines(
  key: string,
  tenant: string,
  record: IdempotencyRecord | null,
  history: readonly ResolutionEntry[],
): string[] {
  const lines = [`key       ${key}`, `tenant    ${tenant}`];
  if (record === null) {
    lines.push('record    none (never claimed, released, forgotten, or past its retention)');
  } else {
    lines.push(
      `state     ${record.state}`,
      `tool      ${record.tool}`,
      `attempt   ${record.attempt} (fence ${record.fence})`,
      `holder    --fence ${record.fence} --owner ${record.owner}`,
      `run       ${record.runId ?? '-'}`,
      `call      ${record.callId ?? '-'}`,
      `describe  ${record.description ?? '-'}`,
      `claimed   ${iso(record.claimedAtMs)}`,
      `updated   ${iso(record.updatedAtMs)}`,
      `lease     ${iso(record.leaseExpiresAtMs)}`,
      `expires   ${iso(record.expiresAtMs)}`,
    );
    if (record.error !== undefined) lines.push(`error     ${record.error.type}: ${record.error.message}`);
    if (record.outcome !== undefined) lines.push(`outcome   ${record.outcome}`);
  }
  if (history.length === 0) {
    lines.push('resolved  never');
  } else {
    lines.push('resolutions (newest first):');
    for (const entry of history) {
      const who = entry.by === undefined ? '' : ` by ${entry.by}`;
      const why = entry.reason === undefined ? '' : `: ${entry.reason}`;
      lines.push(
        `  ${iso(entry.atMs)}  ${entry.action} (was ${entry.fromState}, attempt ${entry.attempt})${who}${why}`,
      );
    }
  }
  return lines;
}
