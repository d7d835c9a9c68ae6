// The operator's reads on Redis. list: one tenant's page from its listing index
// (statements/list-2.lua), or every tenant's pages merged (their expiry indexes found by SCAN on
// every master: an operator's request only); the indexes are kept by the scripts that change
// state (statements/includes/), nothing here scans records. resolutions: a key's journal
// (statements/resolutions-1.lua), newest first, written by resolve-1.lua with the resolution.
import {
  compareListPositions,
  decodeListCursor,
  encodeListCursor,
  type ListedRecord,
  type ListOptions,
  type ListPage,
  type ListPosition,
  listedStates,
  type RecordRef,
  type ResolutionEntry,
  StoreInputError,
  StoreUnavailableError,
} from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import { isCluster, type RedisExchange } from './backend.js';
import { expiryIndexPattern, indexOfExpiry, tenantNames } from './names.js';
import {
  asReply,
  decodeEntry,
  decodeRecord,
  integer,
  type Reply,
  UnexpectedReplyError,
} from './record-codec.js';
import type { ScriptCommand } from './script-commands.js';

/** What `list` needs of its RedisStore. */
export interface RedisListHost {
  readonly prefix: string;
  readonly client: Redis | Cluster;
  readonly exchange: RedisExchange;
  /** The list-2.lua command. */
  readonly list: ScriptCommand;
}

/**
 * Index entries a page examines at most. The index holds every state (the state is read from
 * each record), so a page of a rare state looks past the others: at least 1,000 entries.
 */
const fetchBudget = (limit: number) => Math.min(Math.max(2 * limit + 20, 1000), 2000);
/** list-2.lua converted entries of an earlier layout and has more to convert. */
const CONVERTING = 18;
const SCAN_COUNT = 500;

const pad = (ms: number) => String(ms).padStart(15, '0');

interface Start {
  readonly suffix: string;
  readonly inclusive: boolean;
}

interface TenantPage {
  readonly tenant: string;
  readonly records: ListedRecord[];
  /** Where this tenant's page stopped, when it has more. */
  readonly last: ListPosition | undefined;
  readonly nowMs: number;
}

function scriptArguments(options: ListOptions): (string | number)[] {
  const states = listedStates(options);
  let letters = '';
  if (states.has('indeterminate')) letters += 'i';
  if (states.has('abandoned')) letters += 'a';
  if (states.has('completed')) letters += 'c';
  if (states.has('in_progress') || states.has('lease_expired')) letters += 'p';
  if (states.has('awaiting_approval')) letters += 'w';
  if (states.has('approved')) letters += 'y';
  if (states.has('denied')) letters += 'n';
  return [
    options.order ?? 'oldest',
    options.limit,
    fetchBudget(options.limit),
    letters,
    states.has('in_progress') ? 'all' : 'expired',
    options.tool ?? '',
    options.olderThanMs === undefined ? '' : options.olderThanMs,
  ];
}

async function tenantPage(
  host: RedisListHost,
  names: { index: string; expiry: string },
  options: ListOptions,
  start: Start | undefined,
): Promise<TenantPage> {
  for (;;) {
    const raw = await host.exchange.run('list', host.client, () =>
      host.list(
        names.index,
        names.expiry,
        ...scriptArguments(options),
        start?.suffix ?? '',
        start?.inclusive === true ? '1' : '0',
      ),
    );
    if (Array.isArray(raw) && raw[0] === CONVERTING) continue;
    return host.exchange.decode('list', () => decodeTenantPage(raw, options.tenant));
  }
}

function decodeTenantPage(raw: unknown, knownTenant: string | undefined): TenantPage {
  const reply = asReply('list', raw);
  if (Number(reply[0]) !== 15 || reply.length < 4) throw new UnexpectedReplyError('list', raw);
  const nowMs = integer('list', reply, 1);
  const tenant = knownTenant ?? textOf(reply[3], raw);
  const records: ListedRecord[] = [];
  for (const item of reply.slice(4)) {
    if (!Array.isArray(item) || item.length !== 2 || !Array.isArray(item[1]))
      throw new UnexpectedReplyError('list', raw);
    const key = textOf(item[0], raw);
    const { outcome: _outcome, ...listed } = decodeRecord('list', { tenant, key }, item[1] as Reply);
    records.push(listed);
  }
  const last = reply[2] === null ? undefined : positionOf(tenant, textOf(reply[2], raw));
  return { tenant, records, last, nowMs };
}

function textOf(value: unknown, raw: unknown): string {
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  throw new UnexpectedReplyError('list', raw);
}

function positionOf(tenant: string, suffix: string): ListPosition {
  return { updatedAtMs: Number(suffix.slice(0, 15)), tenant, key: suffix.slice(15) };
}

const positionOfRecord = (record: ListedRecord): ListPosition => ({
  updatedAtMs: record.updatedAtMs ?? 0,
  tenant: record.tenant,
  key: record.key,
});

/** Where tenant `tenant`'s page starts, after `cursor` in the global (updatedAtMs, tenant, key) order. */
function startFor(
  tenant: string,
  cursor: ListPosition | undefined,
  order: 'oldest' | 'newest',
): Start | undefined {
  if (cursor === undefined) return undefined;
  if (tenant === cursor.tenant) return { suffix: pad(cursor.updatedAtMs) + cursor.key, inclusive: false };
  const before = tenant < cursor.tenant;
  if (order === 'oldest') {
    return before
      ? { suffix: pad(cursor.updatedAtMs + 1), inclusive: true }
      : { suffix: pad(cursor.updatedAtMs), inclusive: true };
  }
  return before
    ? { suffix: pad(cursor.updatedAtMs + 1), inclusive: false }
    : { suffix: pad(cursor.updatedAtMs), inclusive: false };
}

/** `list` on Redis, the options checked. @throws StoreInputError, StoreUnavailableError */
export async function listRedis(host: RedisListHost, options: ListOptions): Promise<ListPage> {
  const order = options.order ?? 'oldest';
  const cursor = options.cursor === undefined ? undefined : decodeListCursor(options.cursor, order);
  if (options.allTenants !== true) {
    const tenant = options.tenant as string;
    if (cursor !== undefined && cursor.tenant !== tenant) {
      throw new StoreInputError('cursor', 'was made for a listing of another tenant');
    }
    const page = await tenantPage(
      host,
      tenantNames(host.prefix, tenant),
      options,
      startFor(tenant, cursor, order),
    );
    return page.last === undefined
      ? { records: page.records, nowMs: page.nowMs }
      : { records: page.records, cursor: encodeListCursor(page.last, order), nowMs: page.nowMs };
  }
  const expiries = await allExpiryIndexes(host);
  const pages: TenantPage[] = [];
  for (const expiry of expiries) {
    const tenant = await tenantNameOf(host, expiry);
    if (tenant === undefined) continue;
    const names = { index: indexOfExpiry(expiry), expiry };
    pages.push(await tenantPage(host, names, { ...options, tenant }, startFor(tenant, cursor, order)));
  }
  return mergePages(pages, options.limit, order);
}

/** Merges tenants' pages: only records up to the earliest point where some tenant's page stopped. */
export function mergePages(
  pages: readonly TenantPage[],
  limit: number,
  order: 'oldest' | 'newest',
): ListPage {
  const sign = order === 'oldest' ? 1 : -1;
  const compare = (a: ListPosition, b: ListPosition) => sign * compareListPositions(a, b);
  let bound: ListPosition | undefined;
  for (const page of pages) {
    if (page.last !== undefined && (bound === undefined || compare(page.last, bound) < 0)) bound = page.last;
  }
  const all = pages
    .flatMap((page) => page.records)
    .filter((record) => bound === undefined || compare(positionOfRecord(record), bound) <= 0)
    .sort((a, b) => compare(positionOfRecord(a), positionOfRecord(b)));
  const nowMs = Math.max(0, ...pages.map((page) => page.nowMs));
  const records = all.slice(0, limit);
  const lastTaken = records.at(-1);
  if (all.length > limit && lastTaken !== undefined) {
    return { records, cursor: encodeListCursor(positionOfRecord(lastTaken), order), nowMs };
  }
  if (bound !== undefined) return { records, cursor: encodeListCursor(bound, order), nowMs };
  return { records, nowMs };
}

/** The masters the client knows (every master of a Cluster, once its topology is known). */
export async function masters(client: Redis | Cluster, exchange: RedisExchange): Promise<Redis[]> {
  if (!isCluster(client)) return [client];
  if (client.status !== 'ready') {
    // Topology is known once the cluster is ready; a PING waits for that (bounded below).
    await exchange.run('list', client, () => client.ping());
  }
  const nodes = client.nodes('master');
  if (nodes.length === 0) {
    throw new StoreUnavailableError('list', `${exchange.site}: the cluster client knows no master`);
  }
  return nodes;
}

/** Every tenant's expiry index, found by SCAN on every master: an operator's listing of all tenants only. */
async function allExpiryIndexes(host: RedisListHost): Promise<string[]> {
  const pattern = expiryIndexPattern(host.prefix);
  const found = new Set<string>();
  for (const node of await masters(host.client, host.exchange)) {
    let cursor = '0';
    do {
      const [next, keys] = await host.exchange.run('list', node, () =>
        node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT),
      );
      cursor = next;
      for (const key of keys) found.add(key);
    } while (cursor !== '0');
  }
  return [...found].sort();
}

async function tenantNameOf(host: RedisListHost, expiry: string): Promise<string | undefined> {
  const [named] = await host.exchange.run('list', host.client, () =>
    host.client.zrangebyscore(expiry, '+inf', '+inf', 'LIMIT', 0, 1),
  );
  return named?.startsWith('t|') === true ? named.slice(2) : undefined;
}

/** `resolutions` on Redis, from the key's journal (`journal`). @throws StoreUnavailableError */
export async function readResolutions(
  client: Redis | Cluster,
  exchange: RedisExchange,
  command: ScriptCommand,
  ref: RecordRef,
  journal: string,
): Promise<ResolutionEntry[]> {
  const raw = await exchange.run('resolutions', client, () => command(journal));
  return exchange.decode('resolutions', () => {
    const reply = asReply('resolutions', raw);
    if (Number(reply[0]) !== 15) throw new UnexpectedReplyError('resolutions', raw);
    return reply.slice(2).map((entry) => {
      if (!Array.isArray(entry) || (entry.length !== 11 && entry.length !== 12))
        throw new UnexpectedReplyError('resolutions', raw);
      return decodeEntry('resolutions', ref, entry, raw);
    });
  });
}
