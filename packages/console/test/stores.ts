// The stores the browser tests run the console on: MemoryStore, RedisStore on the shared Redis
// (a prefix of its own, its keys deleted after, never a flush), PostgresStore in a schema of its
// own (dropped after, a pool of at most 4), SQLiteStore in a fresh directory (removed after). A
// store without `list` fails the test, naming why.
import { type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import { createPool, dropSchema, requirePostgres, uniqueSchemaName } from '../../../test/support/postgres.js';
import { connectRedis, deletePrefix, randomPrefix } from '../../../test/support/redis.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

export type StoreName = 'memory' | 'redis' | 'postgres' | 'sqlite';

export interface OpenedStore {
  readonly store: IdempotencyStore;
  /**
   * MemoryStore only: its clock, which stands still until advanced, so the pages (and the
   * screenshots taken of them) show the same times on every run.
   */
  readonly clock?: { advance(ms: number): void };
  close(): Promise<void>;
}

/** 2026-12-01 09:00:00 UTC, the memory store's first moment. */
const MEMORY_EPOCH_MS = Date.UTC(2026, 11, 1, 9, 0, 0);

function openMemory(): OpenedStore {
  let nowMs = MEMORY_EPOCH_MS;
  return {
    store: new MemoryStore({ clock: { now: () => nowMs } }),
    clock: {
      advance: (ms) => {
        nowMs += ms;
      },
    },
    close: async () => undefined,
  };
}

function requireListing(name: string, store: IdempotencyStore): void {
  if (typeof store.list !== 'function' || typeof store.resolutions !== 'function') {
    throw new Error(
      `${name} has no list() / resolutions() yet: the console lists records with the store listing of issue #20`,
    );
  }
}

async function openRedis(): Promise<OpenedStore> {
  const prefix = randomPrefix('console');
  const client = await connectRedis({ connectionName: `tf-${prefix}` });
  const store = new RedisStore({ client, prefix });
  return {
    store,
    close: async () => {
      await store.close();
      await deletePrefix(client, prefix);
      client.disconnect();
    },
  };
}

async function openPostgres(): Promise<OpenedStore> {
  await requirePostgres();
  const schema = uniqueSchemaName('console');
  const pool = createPool({ max: 4 });
  const store = new PostgresStore({ pool, schema });
  try {
    await store.ensureSchema();
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    store,
    close: async () => {
      await store.close();
      await dropSchema(schema);
      await pool.end();
    },
  };
}

async function openSqlite(): Promise<OpenedStore> {
  const directory = sqliteDirectory('console');
  const store = new SQLiteStore({ path: directory.file('console.db') });
  await store.ensureSchema();
  return {
    store,
    close: async () => {
      await store.close();
      directory.remove();
    },
  };
}

const OPENERS: Record<StoreName, () => OpenedStore | Promise<OpenedStore>> = {
  memory: openMemory,
  redis: openRedis,
  postgres: openPostgres,
  sqlite: openSqlite,
};

const NAMES: Record<StoreName, string> = {
  memory: 'MemoryStore',
  redis: 'RedisStore',
  postgres: 'PostgresStore',
  sqlite: 'SQLiteStore',
};

/** Opens the store `name`; throws when it cannot list (a store test never skips). */
export async function openStore(name: StoreName): Promise<OpenedStore> {
  const opened = await OPENERS[name]();
  try {
    requireListing(NAMES[name], opened.store);
  } catch (error) {
    await opened.close();
    throw error;
  }
  return opened;
}
