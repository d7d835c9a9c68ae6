// The store contract's conformance suite, run against a real PostgreSQL.
import { describeStoreConformance } from '@toolfence/core/testing';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll } from 'vitest';
import {
  createPool,
  createUnreachablePool,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../support/postgres.js';

const schema = uniqueSchemaName('conformance');
const pools: pg.Pool[] = [];

afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
});

describeStoreConformance(
  'PostgresStore',
  async () => {
    await requirePostgres();
    const pool = createPool({ max: 20 });
    pools.push(pool);
    const store = new PostgresStore({ pool, schema });
    await store.ensureSchema();
    return store;
  },
  {
    // Racers on pools of their own: every race really reaches PostgreSQL from several backends.
    createPeerStore: () => {
      const pool = createPool({ max: 10 });
      pools.push(pool);
      return new PostgresStore({ pool, schema });
    },
    createUnavailableStore: () => {
      const pool = createUnreachablePool();
      pools.push(pool);
      return new PostgresStore({ pool, schema });
    },
    cleanup: () => dropSchema(schema),
  },
);
