// The evidence of a fault run: the whole history checks.ts judged (ledger, records, snapshots
// of every record loss, releases, events, answers), written as JSON so a failing run can be
// read event by event. FAULT_HISTORY_DIR=<dir> writes it for failing runs,
// FAULT_HISTORY=always for every run. `npx tsx test/faults/history-dump.ts <file>` re-checks one;
// with a key prefix after the file it prints that key's whole trail in time order.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkHistory, type History } from './checks.js';

/** Maps and sets as arrays of entries, so JSON keeps them. */
function replacer(_key: string, value: unknown): unknown {
  if (value instanceof Map) return { $map: [...value.entries()] };
  if (value instanceof Set) return { $set: [...value.values()] };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === 'object') {
    if ('$map' in value) return new Map((value as { $map: [unknown, unknown][] }).$map);
    if ('$set' in value) return new Set((value as { $set: unknown[] }).$set);
  }
  return value;
}

/** Writes `history` to FAULT_HISTORY_DIR when the run failed (or always, FAULT_HISTORY=always). */
export function dumpHistory(
  store: string,
  runTag: string,
  history: History,
  failed: boolean,
  log: (line: string) => void,
): void {
  const dir = process.env.FAULT_HISTORY_DIR;
  if (dir === undefined || dir === '') return;
  if (!failed && process.env.FAULT_HISTORY !== 'always') return;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${store}-${runTag}${failed ? '-failed' : ''}.json`);
  writeFileSync(file, JSON.stringify(history, replacer));
  log(`history written to ${file}`);
}

/** Reads a history written by dumpHistory. */
export function readHistory(file: string): History {
  return JSON.parse(readFileSync(file, 'utf8'), reviver) as History;
}

/** Everything the history holds about the keys starting with `prefix`, in time order. */
export function trailOf(history: History, prefix: string): string[] {
  const lines: [number, string][] = [];
  const keys = [...history.keys.keys()].filter((key) => key.startsWith(prefix));
  const short = (key: string) => key.slice(0, 12);
  for (const key of keys) lines.push([0, `key ${short(key)}: ${history.keys.get(key)}`]);
  for (const [index, loss] of (history.losses ?? []).entries()) {
    for (const key of keys) {
      const record = loss.records.get(key);
      lines.push([
        loss.startMs,
        `loss ${index} [${loss.startMs}..${loss.endMs}] snapshot ${short(key)}: ${JSON.stringify(record ?? null)}`,
      ]);
    }
  }
  for (const entry of history.ledger.filter((entry) => keys.includes(entry.key))) {
    lines.push([
      entry.claimSentMs ?? 0,
      `execution ${entry.execId} ${short(entry.key)} fence ${entry.fence} attempt ${entry.attempt} call ${entry.delivery} claim [${entry.claimSentMs}..${entry.claimRepliedMs}] body at ${entry.timeMs}, ended ${history.bodyEndTimes?.get(entry.execId)} returned ${history.bodyEnds.get(entry.execId)}`,
    ]);
  }
  for (const release of (history.releases ?? []).filter((release) => keys.includes(release.key))) {
    lines.push([release.startMs, `released ${short(release.key)} [${release.startMs}..${release.endMs}]`]);
  }
  for (const event of history.events.filter((event) => keys.includes(event.key))) {
    const { t: _t, key, timeMs, ...rest } = event;
    lines.push([timeMs, `event ${short(key)} ${JSON.stringify(rest)}`]);
  }
  for (const call of history.calls.filter((call) => keys.includes(call.key))) {
    for (const answer of call.answers) {
      const { t: _t, sentMs, answeredMs, ...rest } = answer;
      lines.push([
        answeredMs ?? 0,
        `answer call ${call.id} [${sentMs}..${answeredMs}] ${JSON.stringify(rest)}`,
      ]);
    }
  }
  for (const key of keys)
    lines.push([
      Number.MAX_SAFE_INTEGER,
      `final ${short(key)}: ${JSON.stringify(history.records.get(key) ?? null)}`,
    ]);
  return lines.sort((a, b) => a[0] - b[0]).map(([timeMs, line]) => `${timeMs} ${line}`);
}

if (process.argv[1]?.endsWith('history-dump.ts') && process.argv[2] !== undefined) {
  const history = readHistory(process.argv[2]);
  if (process.argv[3] !== undefined) {
    for (const line of trailOf(history, process.argv[3])) console.log(line);
  } else {
    const checks = checkHistory(history);
    console.log(
      JSON.stringify({ lost: checks.lost, duplicates: checks.duplicates, detail: checks.detail }, null, 2),
    );
    for (const violation of checks.violations) console.log(`violation: ${violation}`);
  }
}
