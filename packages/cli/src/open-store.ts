// Opens the store a `--store` names, with the namespace options the stores take (`--prefix` for
// Redis, `--schema` and `--table` for PostgreSQL, `--table` for SQLite). The store is built (and
// its options checked) before anything connects, so a bad option is exit 2 at once; then it
// connects, so an unreachable store is exit 3 within CONNECT_TIMEOUT_MS, never a hang. Whatever
// was opened is closed on every path. The drivers are the application's own (peer dependencies),
// imported only when used. Read-only commands open read-only where the store can (SQLite, and
// PostgreSQL sessions with default_transaction_read_only).
import { existsSync } from 'node:fs';
import type { IdempotencyStore } from '@toolfence/core';
import { CliError, ExitCode } from './exit-codes.js';
import type { StoreLocation } from './store-url.js';

/** Namespace options of the stores. */
export interface StoreNamespace {
  readonly prefix?: string;
  readonly schema?: string;
  readonly table?: string;
}

/** What a command may do to the store. */
export type Access = 'read' | 'write';

/** An open store, where it is, and how to let go of it. */
export interface OpenStore {
  readonly store: IdempotencyStore;
  /** The namespace read, as it may be printed: `prefix "toolfence"`, `schema "x" table "y"`. */
  readonly namespace: string;
  /** The namespace options as given or defaulted (for --json). */
  readonly namespaceOptions: Readonly<Record<string, string>>;
  /**
   * Whether the namespace holds anything of toolfence's at all (Redis: any key under the prefix;
   * PostgreSQL and SQLite: the tables exist, which a read already showed), and, when it does not,
   * the namespaces nearby that do (other Redis prefixes).
   */
  probe(): Promise<{ readonly hasData: boolean; readonly elsewhere: readonly string[] }>;
  close(): Promise<void>;
}

/** Longest wait for the store to answer, in ms (connection and each operation). */
export const CONNECT_TIMEOUT_MS = 5000;

const DEFAULT_PREFIX = 'toolfence';
const DEFAULT_SCHEMA = 'toolfence';

/**
 * Options that belong to another kind of store are refused: `--prefix` on PostgreSQL would be
 * ignored, and the records read would be the default namespace's. @throws CliError (usage)
 */
export function checkNamespaceFor(location: StoreLocation, namespace: StoreNamespace): void {
  const allowed: Record<StoreLocation['kind'], readonly (keyof StoreNamespace)[]> = {
    redis: ['prefix'],
    postgres: ['schema', 'table'],
    sqlite: ['table'],
  };
  for (const option of ['prefix', 'schema', 'table'] as const) {
    if (namespace[option] !== undefined && !allowed[location.kind].includes(option)) {
      throw new CliError(
        `--${option} is not an option of the ${location.kind} store (${location.kind === 'redis' ? '--prefix' : location.kind === 'postgres' ? '--schema, --table' : '--table'} are)`,
        ExitCode.usage,
      );
    }
  }
}

/** @throws CliError (usage for a bad option, store unavailable, or a driver that is not installed) */
export async function openStore(
  location: StoreLocation,
  namespace: StoreNamespace,
  access: Access,
): Promise<OpenStore> {
  checkNamespaceFor(location, namespace);
  switch (location.kind) {
    case 'redis':
      return openRedis(location, namespace);
    case 'postgres':
      return openPostgres(location, namespace, access);
    case 'sqlite':
      return openSqlite(location, namespace, access);
  }
}

async function driver<T>(name: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    throw new CliError(
      `the ${name} driver is not installed here (npm install ${name}): ${(error as Error).message}`,
      ExitCode.storeUnavailable,
    );
  }
}

function unavailable(location: StoreLocation, error: unknown): CliError {
  return new CliError(
    `cannot reach ${location.shown}: ${(error as Error)?.message ?? String(error)}`,
    ExitCode.storeUnavailable,
  );
}

/**
 * `promise`, or a rejection once CONNECT_TIMEOUT_MS passed: ioredis' connectTimeout covers the TCP
 * connect only, and a server that accepts but never answers would keep `connect()` waiting.
 */
async function withDeadline<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`no answer to ${what} within ${CONNECT_TIMEOUT_MS} ms`)),
      CONNECT_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A store's constructor refusing an option is the operator's input: exit 2, nothing opened. */
function build<T>(make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof TypeError) throw new CliError(error.message, ExitCode.usage);
    throw error;
  }
}

const quoted = (text: string) => JSON.stringify(text);

async function openRedis(location: StoreLocation, namespace: StoreNamespace): Promise<OpenStore> {
  const { Redis } = await driver('ioredis', () => import('ioredis'));
  const { RedisStore } = await import('@toolfence/stores/redis');
  const client = new Redis(location.target, {
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    // One try: an operator's command fails fast (exit 3) instead of retrying forever.
    retryStrategy: () => null,
  });
  client.on('error', () => undefined);
  const prefix = namespace.prefix ?? DEFAULT_PREFIX;
  let store: InstanceType<typeof RedisStore>;
  try {
    store = build(() => new RedisStore({ client, prefix, operationTimeoutMs: CONNECT_TIMEOUT_MS }));
    await withDeadline(client.connect(), 'connect');
  } catch (error) {
    client.disconnect();
    throw error instanceof CliError ? error : unavailable(location, error);
  }
  return {
    store,
    namespace: `prefix ${quoted(prefix)}`,
    namespaceOptions: { prefix },
    probe: () => probeRedis(client, prefix),
    close: async () => {
      try {
        await store.close();
      } finally {
        client.disconnect();
      }
    },
  };
}

/** SCAN's MATCH syntax escaped. */
const escapeGlob = (text: string) => text.replace(/[\\*?[\]]/g, '\\$&');

/** Keys under `prefix`, else the prefixes that hold toolfence keys (SCAN: the operator's rare path). */
async function probeRedis(
  client: import('ioredis').Redis,
  prefix: string,
): Promise<{ hasData: boolean; elsewhere: string[] }> {
  const scan = async (match: string, enough: (keys: string[]) => boolean) => {
    const found: string[] = [];
    const deadline = Date.now() + CONNECT_TIMEOUT_MS;
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0' && !enough(found) && Date.now() < deadline);
    return found;
  };
  const own = await scan(`${escapeGlob(prefix)}:*`, (keys) => keys.length > 0);
  if (own.length > 0) return { hasData: true, elsewhere: [] };
  const prefixes = new Set<string>();
  for (const key of await scan('*:v2:[rijx]:{*', (keys) => keys.length >= 1000)) {
    prefixes.add(key.slice(0, key.lastIndexOf(':v2:', key.indexOf(':{'))));
  }
  return { hasData: false, elsewhere: [...prefixes].sort().slice(0, 10) };
}

async function openPostgres(
  location: StoreLocation,
  namespace: StoreNamespace,
  access: Access,
): Promise<OpenStore> {
  const pg = await driver('pg', () => import('pg'));
  const { PostgresStore } = await import('@toolfence/stores/postgres');
  const Pool = (pg.default ?? pg).Pool;
  const pool = new Pool({
    connectionString: location.target,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A read-only command cannot write, whatever a statement would do.
    ...(access === 'read' ? { options: '-c default_transaction_read_only=on' } : {}),
  });
  pool.on('error', () => undefined);
  const schema = namespace.schema ?? DEFAULT_SCHEMA;
  let store: InstanceType<typeof PostgresStore>;
  try {
    store = build(
      () =>
        new PostgresStore({
          pool,
          schema,
          ...(namespace.table === undefined ? {} : { table: namespace.table }),
          operationTimeoutMs: CONNECT_TIMEOUT_MS,
        }),
    );
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw error instanceof CliError ? error : unavailable(location, error);
  }
  return {
    store,
    namespace: `schema ${quoted(schema)}${namespace.table === undefined ? '' : ` table ${quoted(namespace.table)}`}`,
    namespaceOptions: { schema, ...(namespace.table === undefined ? {} : { table: namespace.table }) },
    probe: async () => ({ hasData: true, elsewhere: [] }),
    close: async () => {
      try {
        await store.close();
      } finally {
        await pool.end();
      }
    },
  };
}

async function openSqlite(
  location: StoreLocation,
  namespace: StoreNamespace,
  access: Access,
): Promise<OpenStore> {
  await driver('better-sqlite3', () => import('better-sqlite3'));
  const { SQLiteStore } = await import('@toolfence/stores/sqlite');
  const open = (readOnly: boolean) =>
    build(
      () =>
        new SQLiteStore({
          path: location.target,
          ...(namespace.table === undefined ? {} : { table: namespace.table }),
          readOnly,
        }),
    );
  let store = open(true);
  if (!existsSync(location.target)) {
    // Opening would create an empty database: an operator mistyped the path.
    throw new CliError(`no SQLite database at ${location.shown}`, ExitCode.storeUnavailable);
  }
  if (access === 'write') {
    // A writable open puts the file in WAL mode: first make sure it is a toolfence database.
    try {
      await store.get({ tenant: 'toolfence-cli-probe', key: 'probe' });
    } finally {
      await store.close();
    }
    store = open(false);
  }
  const table = namespace.table ?? 'toolfence_records';
  return {
    store,
    namespace: `table ${quoted(table)}`,
    namespaceOptions: { table },
    probe: async () => ({ hasData: true, elsewhere: [] }),
    close: () => store.close(),
  };
}
