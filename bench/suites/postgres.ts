import { Guard } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import type { Row } from '../lib/report.js';
import { connectPostgres, randomName } from '../lib/services.js';
import { storeLatencyRows } from '../lib/store-latency.js';

/**
 * The pool as the store sees it, with every `pool.query` counted (pg_stat_statements needs
 * `shared_preload_libraries`, which a stock install lacks; one `pool.query` is one statement
 * and one round trip). Everything else (connect, totalCount) is the pool's own, so the store
 * still takes its LISTEN connection from it.
 */
export function countingPool(pool: pg.Pool): { pool: pg.Pool; count: () => number } {
  let statements = 0;
  const query = (...args: unknown[]) => {
    statements++;
    return (pool.query as (...a: unknown[]) => unknown)(...args);
  };
  const proxy = new Proxy(pool, {
    get(target, property) {
      if (property === 'query') return query;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { pool: proxy, count: () => statements };
}

/** A PostgresStore in a throwaway schema, and how to drop it again. */
export async function throwawayPostgresStore(pool: pg.Pool, label: string) {
  const schema = randomName(label);
  const store = new PostgresStore({ pool, schema });
  await store.ensureSchema();
  return {
    store,
    schema,
    async drop(): Promise<void> {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

export const postgresPoolSize = 16;

export async function postgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const counted = countingPool(pool);
  const { store, drop } = await throwawayPostgresStore(counted.pool, 'postgres');
  try {
    return await storeLatencyRows({
      label: 'postgres',
      guard: new Guard({ store }),
      oneRoundTrip: () => pool.query('SELECT 1'),
      roundTripName: 'SELECT 1',
      countRoundTrips: async (work) => {
        const before = counted.count();
        await work();
        // Postgres reports no per-statement server time without pg_stat_statements.
        return { roundTrips: counted.count() - before, serverMicroseconds: Number.NaN };
      },
      firstCallTarget: '<= 1.5',
      repeatTarget: null,
      // Postgres calls cost ten times Redis ones: fewer per round keep the suite within a minute.
      sizes: { sequential: 100, concurrent: 600, rounds: 5 },
    });
  } finally {
    await drop();
    await pool.end();
  }
}
