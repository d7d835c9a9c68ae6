// `toolfence list` and `toolfence stats`: reading the listing index.
import type { Guard, ListedRecord, ListOptions, ListState } from '@toolfence/core';
import { MAX_LIST_LIMIT } from '@toolfence/core/store';
import type { CommandContext, Work } from './context.js';
import { parseCount, parseDuration } from './durations.js';
import { visible } from './escape.js';
import { CliError, ExitCode } from './exit-codes.js';
import { LIST_HEADER, LIST_HEADER_ALL_TENANTS, listRows, shownState, table } from './output.js';
import { emptyNamespace, placeJson, whyNoRecords } from './place.js';

const STATES: readonly ListState[] = [
  'indeterminate',
  'abandoned',
  'lease_expired',
  'in_progress',
  'completed',
  'awaiting_approval',
  'approved',
  'denied',
];

export interface ListFlags {
  readonly state?: string[];
  readonly allTenants?: boolean;
  readonly tool?: string;
  readonly olderThan?: string;
  readonly limit?: string;
  readonly order?: string;
  readonly cursor?: string;
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

/** The listing options but the tenant, checked before anything connects. @throws CliError (usage) */
function checkedOptions(flags: ListFlags, tenantGiven: boolean): Omit<ListOptions, 'limit' | 'tenant'> {
  if (flags.allTenants === true && tenantGiven) {
    throw new CliError('--tenant and --all-tenants exclude each other', ExitCode.usage);
  }
  const order = flags.order ?? 'oldest';
  if (order !== 'oldest' && order !== 'newest') {
    throw new CliError(`--order must be oldest or newest, got ${JSON.stringify(order)}`, ExitCode.usage);
  }
  if (flags.tool !== undefined && flags.tool === '')
    throw new CliError('--tool must not be empty', ExitCode.usage);
  if (flags.cursor !== undefined && flags.cursor === '') {
    throw new CliError('--cursor must not be empty (give the one a --json listing printed)', ExitCode.usage);
  }
  const states = parseStates(flags.state);
  return {
    ...(flags.allTenants === true ? { allTenants: true } : {}),
    ...(states === undefined ? {} : { states }),
    ...(flags.tool === undefined ? {} : { tool: flags.tool }),
    ...(flags.olderThan === undefined ? {} : { olderThanMs: parseDuration('--older-than', flags.olderThan) }),
    order,
  };
}

function withTenant(
  options: Omit<ListOptions, 'limit' | 'tenant'>,
  context: CommandContext,
): Omit<ListOptions, 'limit'> {
  return options.allTenants === true ? options : { ...options, tenant: context.tenant };
}

/** Pages through the listing until `limit` records (or the end); the cursor where it stopped. */
async function collect(
  guard: Guard,
  options: Omit<ListOptions, 'limit'>,
  limit: number,
  from: string | undefined,
): Promise<{ records: ListedRecord[]; nowMs: number; cursor: string | undefined }> {
  const records: ListedRecord[] = [];
  let cursor = from;
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
  return { records, nowMs, cursor };
}

/**
 * After an empty answer: exit 3 with the message when the namespace holds nothing of toolfence's,
 * else exit 0 with where the records are.
 */
async function nothingFound(
  guard: Guard,
  context: CommandContext,
  options: Omit<ListOptions, 'limit'>,
): Promise<number> {
  const empty = await emptyNamespace(guard, context);
  if (empty !== undefined) {
    context.output.err(empty);
    return ExitCode.storeUnavailable;
  }
  if (!context.json) context.output.out(await whyNoRecords(guard, context, options));
  return ExitCode.done;
}

/** `toolfence list`: every option checked here, before the store is opened. @throws CliError (usage) */
export function listCommand(flags: ListFlags, tenantGiven: boolean): Work {
  const limit = flags.limit === undefined ? 100 : parseCount('--limit', flags.limit, 1, 1_000_000);
  const checked = checkedOptions(flags, tenantGiven);
  return async (_store, guard, context) => {
    const options = withTenant(checked, context);
    const { records, nowMs, cursor } = await collect(guard, options, limit, flags.cursor);
    if (context.json) {
      for (const record of records)
        context.output.json({ ...record, listedState: shownState(record, nowMs) });
      // The last line says whether records were left out, and where to go on from (--cursor).
      context.output.json({
        page: {
          records: records.length,
          more: cursor !== undefined,
          ...(cursor === undefined ? {} : { cursor }),
          ...placeJson(context),
          ...(options.allTenants === true ? { allTenants: true } : { tenant: context.tenant }),
        },
      });
    }
    if (records.length === 0 && flags.cursor === undefined) return nothingFound(guard, context, options);
    if (context.json) return ExitCode.done;
    const all = options.allTenants === true;
    for (const line of table(all ? LIST_HEADER_ALL_TENANTS : LIST_HEADER, listRows(records, nowMs, all))) {
      context.output.out(line);
    }
    if (cursor !== undefined) {
      context.output.err(
        `(first ${records.length} shown; raise --limit for more, or go on with --cursor ${cursor})`,
      );
    }
    return ExitCode.done;
  };
}

/** Records per state and tool (the listed state: `lease_expired` apart from live `in_progress`). */
export function statsCommand(flags: ListFlags, tenantGiven: boolean): Work {
  const checked = checkedOptions(
    { ...flags, state: flags.state ?? ['in_progress', 'indeterminate', 'abandoned', 'completed'] },
    tenantGiven,
  );
  return async (_store, guard, context) => {
    const options = withTenant(checked, context);
    const { records, nowMs, cursor } = await collect(guard, options, 1_000_000, undefined);
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
    if (rows.length === 0) return nothingFound(guard, context, options);
    if (context.json) {
      for (const [state, tool, count] of rows) context.output.json({ state, tool, count: Number(count) });
    } else {
      const shown = rows.map(([state, tool, count]) => [state, visible(tool), count]);
      for (const line of table(['STATE', 'TOOL', 'COUNT'], shown)) context.output.out(line);
    }
    if (cursor !== undefined) context.output.err('(stopped after 1000000 records)');
    return ExitCode.done;
  };
}
