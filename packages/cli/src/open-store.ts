// Opens the store a `--store` names, with the namespace options the stores take (`--prefix` for
// Redis, `--schema` and `--table` for PostgreSQL, `--table` for SQLite). Connects before any
// command runs, so an unreachable store is exit 3 with a message that names it (masked), never a
// hang. The drivers are the application's own (peer dependencies), imported only when used.
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

/** An open store and how to let go of it. */
export interface OpenStore {
  readonly store: IdempotencyStore;
  close(): Promise<void>;
}

/** Longest wait for the store to answer, in ms (connection and each operation). */
const CONNECT_TIMEOUT_MS = 5000;

/** @throws CliError (store unavailable, or a driver that is not installed) */
export async function openStore(location: StoreLocation, namespace: StoreNamespace): Promise<OpenStore> {
  switch (location.kind) {
    case 'redis':
      return openRedis(location, namespace);
    case 'postgres':
      return openPostgres(location, namespace);
    case 'sqlite':
      return openSqlite(location, namespace);
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
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    throw unavailable(location, error);
  }
  const store = new RedisStore({
    client,
    ...(namespace.prefix === undefined ? {} : { prefix: namespace.prefix }),
    operationTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  return {
    store,
    close: async () => {
      await store.close();
      client.disconnect();
    },
  };
}

async function openPostgres(location: StoreLocation, namespace: StoreNamespace): Promise<OpenStore> {
  const pg = await driver('pg', () => import('pg'));
  const { PostgresStore } = await import('@toolfence/stores/postgres');
  const Pool = (pg.default ?? pg).Pool;
  const pool = new Pool({
    connectionString: location.target,
    max: 2,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  pool.on('error', () => undefined);
  try {
    const client = await pool.connect();
    client.release();
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw unavailable(location, error);
  }
  const store = new PostgresStore({
    pool,
    ...(namespace.schema === undefined ? {} : { schema: namespace.schema }),
    ...(namespace.table === undefined ? {} : { table: namespace.table }),
    operationTimeoutMs: CONNECT_TIMEOUT_MS,
  });
  return {
    store,
    close: async () => {
      await store.close();
      await pool.end();
    },
  };
}

async function openSqlite(location: StoreLocation, namespace: StoreNamespace): Promise<OpenStore> {
  if (!existsSync(location.target)) {
    // Opening would create an empty database: an operator mistyped the path.
    throw new CliError(`no SQLite database at ${location.shown}`, ExitCode.storeUnavailable);
  }
  await driver('better-sqlite3', () => import('better-sqlite3'));
  const { SQLiteStore } = await import('@toolfence/stores/sqlite');
  const store = new SQLiteStore({
    path: location.target,
    ...(namespace.table === undefined ? {} : { table: namespace.table }),
  });
  return { store, close: () => store.close() };
}
