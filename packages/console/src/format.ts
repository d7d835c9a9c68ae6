// How times, ages and states read on the page.
import type { ListState } from '@toolfence/core';

/** The states the console lists, in the order of its tabs (what needs a person first). */
export const CONSOLE_STATES: readonly ListState[] = [
  'indeterminate',
  // Beside the unknown outcomes: a call that waits for an operator's approval stops its run too.
  'awaiting_approval',
  'abandoned',
  'lease_expired',
  'in_progress',
  'completed',
];

const STATE_LABELS: Record<ListState, string> = {
  indeterminate: 'Indeterminate',
  abandoned: 'Abandoned',
  lease_expired: 'Lease expired',
  in_progress: 'In progress',
  completed: 'Completed',
  awaiting_approval: 'Awaiting approval',
  approved: 'Approved',
  denied: 'Denied',
};

export function stateLabel(state: ListState): string {
  return STATE_LABELS[state];
}

/** The name of a state's tab and list heading: `Pending approvals` for the calls that wait for one. */
export function tabLabel(state: ListState): string {
  return state === 'awaiting_approval' ? 'Pending approvals' : `${stateLabel(state)} records`;
}

export function isConsoleState(value: string | null): value is ListState {
  return value !== null && (CONSOLE_STATES as readonly string[]).includes(value);
}

/** An epoch-ms time as `2026-12-01 11:47:02 UTC`, or a dash. */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  return `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A duration as `7 d`, `12 h`, `30 min`, `45 s` (the largest whole unit), or `800 ms`. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}`;
  }
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size) return `${(ms / size).toFixed(1)} ${unit}`;
  }
  return `${ms} ms`;
}

/** How long ago `ms` was, seen at `nowMs`: `45 s`, `12 min`, `3 h`, `2 d`. */
export function formatAge(ms: number | undefined, nowMs: number): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  const seconds = Math.max(0, Math.floor((nowMs - ms) / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} d`;
}

/** The age filter's choices: label and `olderThanMs`. */
export const AGE_CHOICES: readonly { readonly label: string; readonly ms: number }[] = [
  { label: 'any age', ms: 0 },
  { label: 'older than 5 minutes', ms: 5 * 60_000 },
  { label: 'older than 1 hour', ms: 60 * 60_000 },
  { label: 'older than 1 day', ms: 24 * 60 * 60_000 },
  { label: 'older than 7 days', ms: 7 * 24 * 60 * 60_000 },
];
