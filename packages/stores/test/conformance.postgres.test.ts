// The store contract's conformance suite, run against a real PostgreSQL.
import { describeStoreConformance } from '@toolfence/core/testing';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll } from 'vitest';
import {
  createPool,
  createUnreachablePool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import { type StallingProxy, startStallingProxy } from '../../../test/support/stalling-proxy.js';

const schema = uniqueSchemaName('conformance');
const pools: pg.Pool[] = [];
const proxies: StallingProxy[] = [];

afterAll(async () => {
  // A frozen proxy first drops its connections, so no pool waits on it at the end.
  for (const proxy of proxies) proxy.dropConnections();
  await Promise.all(pools.map((pool) => pool.end().catch(() => undefined)));
  await Promise.all(proxies.map((proxy) => proxy.close()));
});

describeStoreConformance(
  'PostgresStore',
  async () => {
    await requirePostgres();
    // Pools sized so that this file and store.postgres.test.ts, run side by side, stay well below
    // max_connections 100 (they peaked at 93-100 together with 20 + 3 x 10 here; bench/RESULTS.md,
    // "Issue 22, run 3"), also with two full runs at once on the shared server (issue 37: 53300
    // "too many clients" with 4 x 10 here). The race cases run in batches of `racers`.
    const pool = createPool({ max: 5 });
    pools.push(pool);
    // The default 5 s client deadline. (It was 15 s while the retention-expiry race now and then
    // went unanswered for over 5 s: refused holders queued on the row's lock, each through its own
    // commit's WAL flush. They take no lock now: bench/RESULTS.md, "The PostgreSQL test flake".)
    const store = new PostgresStore({ pool, schema });
    await store.ensureSchema();
    return store;
  },
  {
    // Racers on pools of their own: every race really reaches PostgreSQL from several backends.
    createPeerStore: () => {
      const pool = createPool({ max: 4 });
      pools.push(pool);
      return new PostgresStore({ pool, schema });
    },
    createUnavailableStore: () => {
      const pool = createUnreachablePool();
      pools.push(pool);
      return new PostgresStore({ pool, schema });
    },
    // The shared server through a proxy that stops forwarding once the store is connected: only
    // this store's traffic stalls, the server itself is never frozen.
    createFrozenStore: async () => {
      const url = new URL(databaseUrl);
      const proxy = await startStallingProxy(Number(url.port || 5432), url.hostname);
      proxies.push(proxy);
      url.port = String(proxy.port);
      const pool = createPool({ connectionString: url.toString(), max: 4 });
      pools.push(pool);
      const store = new PostgresStore({ pool, schema, operationTimeoutMs: 500 });
      await store.get({ tenant: 'frozen', key: 'warm-up' });
      proxy.freeze();
      return store;
    },
    frozenOperationTimeoutMs: 500,
    cleanup: () => dropSchema(schema),
  },
);
