// `toolfence list` and `toolfence stats`: reading the listing index.
import {
  type Guard,
  type ListedRecord,
  type ListOptions,
  type ListState,
  MAX_LIST_LIMIT,
} from '@toolfence/core';
import type { CommandContext } from './context.js';
import { parseCount, parseDuration } from './durations.js';
import { CliError, ExitCode } from './exit-codes.js';
import { LIST_HEADER, LIST_HEADER_ALL_TENANTS, listRows, shownState, table } from './output.js';

const STATES: readonly ListState[] = [
  'indeterminate',
  'abandoned',
  'lease_expired',
  'in_progress',
  'completed',
];

export interface ListFlags {
  readonly state?: string[];
  readonly allTenants?: boolean;
  readonly tool?: string;
  readonly olderThan?: string;
  readonly limit?: string;
  readonly order?: string;
}

/** `--state a,b --state c` → the states; every name checked. @throws CliError (usage) */
export function parseStates(values: readonly string[] | undefined): ListState[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  const states = values.flatMap((value) => value.split(',')).map((state) => state.trim());
  for (const state of states) {
    if (!STATES.includes(state as ListState)) {
      throw new CliError(
        `--state must be one of ${STATES.join(', ')}, got ${JSON.stringify(state)}`,
        ExitCode.usage,
      );
    }
  }
  return states as ListState[];
}

function baseOptions(
  flags: ListFlags,
  context: CommandContext,
  tenantGiven: boolean,
): Omit<ListOptions, 'limit'> {
  if (flags.allTenants === true && tenantGiven) {
    throw new CliError('--tenant and --all-tenants exclude each other', ExitCode.usage);
  }
  const order = flags.order ?? 'oldest';
  if (order !== 'oldest' && order !== 'newest') {
    throw new CliError(`--order must be oldest or newest, got ${JSON.stringify(order)}`, ExitCode.usage);
  }
  const states = parseStates(flags.state);
  return {
    ...(flags.allTenants === true ? { allTenants: true } : { tenant: context.tenant }),
    ...(states === undefined ? {} : { states }),
    ...(flags.tool === undefined ? {} : { tool: flags.tool }),
    ...(flags.olderThan === undefined ? {} : { olderThanMs: parseDuration('--older-than', flags.olderThan) }),
    order,
  };
}

/** Pages through the listing until `limit` records (or the end). */
async function collect(
  guard: Guard,
  options: Omit<ListOptions, 'limit'>,
  limit: number,
): Promise<{ records: ListedRecord[]; nowMs: number; more: boolean }> {
  const records: ListedRecord[] = [];
  let cursor: string | undefined;
  let nowMs = Date.now();
  do {
    const page = await guard.list({
      ...options,
      limit: Math.min(MAX_LIST_LIMIT, limit - records.length),
      ...(cursor === undefined ? {} : { cursor }),
    });
    records.push(...page.records);
    nowMs = page.nowMs;
    cursor = page.cursor;
  } while (cursor !== undefined && records.length < limit);
  return { records, nowMs, more: cursor !== undefined };
}

export async function listCommand(
  guard: Guard,
  context: CommandContext,
  flags: ListFlags,
  tenantGiven: boolean,
): Promise<number> {
  const limit = flags.limit === undefined ? 100 : parseCount('--limit', flags.limit, 1, 1_000_000);
  const options = baseOptions(flags, context, tenantGiven);
  const { records, nowMs, more } = await collect(guard, options, limit);
  if (context.json) {
    for (const record of records)
      context.output.out(JSON.stringify({ ...record, listedState: shownState(record, nowMs) }));
    return ExitCode.done;
  }
  if (records.length === 0) {
    context.output.out('no records');
    return ExitCode.done;
  }
  const all = flags.allTenants === true;
  for (const line of table(all ? LIST_HEADER_ALL_TENANTS : LIST_HEADER, listRows(records, nowMs, all))) {
    context.output.out(line);
  }
  if (more) context.output.err(`(first ${records.length} shown; raise --limit for more)`);
  return ExitCode.done;
}

/** Records per state and tool (the listed state: `lease_expired` apart from live `in_progress`). */
export async function statsCommand(
  guard: Guard,
  context: CommandContext,
  flags: ListFlags,
  tenantGiven: boolean,
): Promise<number> {
  const options = {
    ...baseOptions(
      { ...flags, state: flags.state ?? ['in_progress', 'indeterminate', 'abandoned', 'completed'] },
      context,
      tenantGiven,
    ),
  };
  const { records, nowMs, more } = await collect(guard, options, 1_000_000);
  const counts = new Map<string, number>();
  for (const record of records) {
    const id = `${shownState(record, nowMs)}\u0000${record.tool}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  const rows = [...counts.entries()]
    .map(([id, count]) => [...id.split('\u0000'), String(count)] as [string, string, string])
    .sort(
      (a, b) =>
        STATES.indexOf(a[0] as ListState) - STATES.indexOf(b[0] as ListState) || a[1].localeCompare(b[1]),
    );
  if (context.json) {
    for (const [state, tool, count] of rows)
      context.output.out(JSON.stringify({ state, tool, count: Number(count) }));
  } else if (rows.length === 0) {
    context.output.out('no records');
  } else {
    for (const line of table(['STATE', 'TOOL', 'COUNT'], rows)) context.output.out(line);
  }
  if (more) context.output.err('(stopped after 1000000 records)');
  return ExitCode.done;
}
