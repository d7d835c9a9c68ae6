// One store of each kind for a test file, opened before its tests and cleaned up after them:
// MemoryStore, RedisStore (the shared Redis, under a random key prefix, every key deleted after),
// PostgresStore (a schema of its own, dropped after) and SQLiteStore (a file in a directory of
// its own, removed after). Scenario files written once (test/cases/scenarios/) run on each.
import { randomBytes } from 'node:crypto';
import { type IdempotencyStore, MemoryStore } from '@toolfence/core';
import { RedisStore } from '@toolfence/stores/redis';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, expect } from 'vitest';
import { openPostgresStore } from './postgres.js';
import { connectRedis, deletePrefix, keysUnder, randomPrefix } from './redis.js';
import { sqliteDirectory } from './sqlite.js';

export type StoreKind = 'memory' | 'redis' | 'postgres' | 'sqlite';

/** The name a store kind is reported under. */
export const storeNames: Readonly<Record<StoreKind, string>> = {
  memory: 'MemoryStore',
  redis: 'Redis',
  postgres: 'PostgreSQL',
  sqlite: 'SQLite',
};

interface OpenStore {
  readonly store: IdempotencyStore;
  close(): Promise<void>;
}

async function openRedis(label: string): Promise<OpenStore> {
  const prefix = randomPrefix(label);
  const client: Redis = await connectRedis();
  const store = new RedisStore({ client, prefix });
  return {
    store,
    close: async () => {
      await store.close();
      await deletePrefix(client, prefix);
      expect(await keysUnder(client, prefix)).toEqual([]);
      client.disconnect();
    },
  };
}

async function openSqlite(label: string): Promise<OpenStore> {
  const directory = sqliteDirectory(label);
  const store = new SQLiteStore({ path: directory.file(`${label}.db`) });
  await store.ensureSchema();
  return {
    store,
    close: async () => {
      await store.close();
      directory.remove();
    },
  };
}

async function open(kind: StoreKind, label: string): Promise<OpenStore> {
  switch (kind) {
    case 'memory': {
      const store = new MemoryStore();
      return { store, close: () => store.close() };
    }
    case 'redis':
      return openRedis(label);
    case 'postgres': {
      const { store, teardown } = await openPostgresStore(label);
      return { store, close: teardown };
    }
    case 'sqlite':
      return openSqlite(label);
  }
}

/**
 * Registers `beforeAll` / `afterAll` that open a store of `kind` for this file and clean up after
 * it; returns the getter the scenarios call. A missing server fails the file (never skips it).
 */
export function storeForFile(kind: StoreKind, label: string): () => IdempotencyStore {
  let opened: OpenStore | undefined;
  beforeAll(async () => {
    opened = await open(kind, label);
  });
  afterAll(async () => {
    await opened?.close();
  });
  return () => {
    if (opened === undefined) throw new Error(`the ${storeNames[kind]} store of this file is not open`);
    return opened.store;
  };
}

/** A run id or tenant no other file (or run on a shared server) uses. */
export function uniqueName(label: string): string {
  return `${label}-${randomBytes(4).toString('hex')}`;
}
