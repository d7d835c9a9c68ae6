// [#20 listing] RedisStore's operator side: list (one tenant from its index, or every tenant
// merged), the resolution journal, forget by the tenant's expiry index. The indexes are kept by
// the Lua scripts that change state (lua/includes/record.lua); nothing here scans records.
import {
  checkListOptions,
  checkRecordRef,
  checkTenant,
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
} from '@toolfence/core';
import type { Cluster, Redis } from 'ioredis';
import { asReply, decodeEntry, decodeRecord, integer, type Reply, UnexpectedReplyError } from './codes.js';
import { expiryIndexPattern, indexOfExpiry, recordNames, tenantNames } from './record-names.js';

/** Signature of a script defined with `defineCommand`: keys first, then arguments. */
export type ScriptCommand = (...keysAndArguments: (string | number)[]) => Promise<unknown>;

/** What the operator side needs of its RedisStore. */
export interface RedisOperatorHost {
  readonly prefix: string;
  readonly client: Redis | Cluster;
  command(name: 'list' | 'forget' | 'resolutions'): ScriptCommand;
  run<T>(operation: string, connection: Redis | Cluster | undefined, exchange: () => Promise<T>): Promise<T>;
  decode<T>(operation: string, decode: () => T): T;
  masters(operation: string): Promise<Redis[]>;
}

/** Index entries a page examines per state at most. */
const fetchBudget = (limit: number) => Math.min(2 * limit + 20, 2000);
const FORGET_BATCH = 500;
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
  host: RedisOperatorHost,
  names: { index: string; expiry: string },
  options: ListOptions,
  start: Start | undefined,
): Promise<TenantPage> {
  const raw = await host.run('list', host.client, () =>
    host.command('list')(
      names.index,
      names.expiry,
      ...scriptArguments(options),
      start?.suffix ?? '',
      start?.inclusive === true ? '1' : '0',
    ),
  );
  return host.decode('list', () => decodeTenantPage(raw, options.tenant));
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

/** `list` on Redis. @throws StoreInputError, StoreUnavailableError */
export async function listRedis(host: RedisOperatorHost, options: ListOptions): Promise<ListPage> {
  checkListOptions(options);
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

/** Every tenant's expiry index, found by SCAN on every master: an operator's listing of all tenants only. */
async function allExpiryIndexes(host: RedisOperatorHost): Promise<string[]> {
  const pattern = expiryIndexPattern(host.prefix);
  const found = new Set<string>();
  for (const node of await host.masters('list')) {
    let cursor = '0';
    do {
      const [next, keys] = await host.run('list', node, () =>
        node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT),
      );
      cursor = next;
      for (const key of keys) found.add(key);
    } while (cursor !== '0');
  }
  return [...found].sort();
}

async function tenantNameOf(host: RedisOperatorHost, expiry: string): Promise<string | undefined> {
  const [named] = await host.run('list', host.client, () =>
    host.client.zrangebyscore(expiry, '+inf', '+inf', 'LIMIT', 0, 1),
  );
  return named?.startsWith('t|') === true ? named.slice(2) : undefined;
}

/** `resolutions` on Redis. @throws StoreInputError, StoreUnavailableError */
export async function resolutionsRedis(host: RedisOperatorHost, ref: RecordRef): Promise<ResolutionEntry[]> {
  checkRecordRef(ref);
  const names = recordNames(host.prefix, ref);
  const raw = await host.run('resolutions', host.client, () => host.command('resolutions')(names.journal));
  return host.decode('resolutions', () => {
    const reply = asReply('resolutions', raw);
    if (Number(reply[0]) !== 15) throw new UnexpectedReplyError('resolutions', raw);
    return reply.slice(2).map((entry) => {
      if (!Array.isArray(entry) || entry.length !== 11) throw new UnexpectedReplyError('resolutions', raw);
      return decodeEntry('resolutions', ref, entry, raw);
    });
  });
}

/**
 * `forget` on Redis: the tenant's expiry index names every record and journal of the tenant;
 * erased in batches (one script each, on the tenant's slot) until none is left.
 * @throws StoreUnavailableError
 */
export async function forgetRedis(host: RedisOperatorHost, tenant: string): Promise<number> {
  checkTenant(tenant);
  const names = tenantNames(host.prefix, tenant);
  let erased = 0;
  for (;;) {
    const raw = await host.run('forget', host.client, () =>
      host.command('forget')(names.index, names.expiry, FORGET_BATCH),
    );
    const { count, left } = host.decode('forget', () => {
      const reply = asReply('forget', raw);
      if (Number(reply[0]) !== 10 || reply.length !== 4) throw new UnexpectedReplyError('forget', raw);
      return { count: integer('forget', reply, 2), left: integer('forget', reply, 3) };
    });
    erased += count;
    if (left === 0) return erased;
  }
}
