import { Guard } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { listingRows } from '../lib/listing-rows.js';
import { postgresWriteRows } from '../lib/postgres-writes.js';
import type { Row } from '../lib/report.js';
import { connectPostgres, randomName } from '../lib/services.js';
import { storeLatencyRows } from '../lib/store-latency.js';
import { outcome100 } from '../lib/workloads.js';

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

/**
 * The durable work a first call cannot avoid, in the same schema and pool as the store: a bare
 * `(key text primary key, outcome text)` table; a first call's floor is two single-row
 * `INSERT ... ON CONFLICT DO NOTHING` in autocommit (two commits: the claim and the completion
 * are each made durable), a repeat's one primary-key `SELECT`. Named (prepared) statements, as
 * the store uses.
 */
export async function durableBaselines(pool: pg.Pool, schema: string) {
  const table = `"${schema}"."bare_records"`;
  await pool.query(`CREATE TABLE ${table} (key text PRIMARY KEY, outcome text NOT NULL)`);
  const repeatPool = 1_000;
  const outcome = JSON.stringify(outcome100(0));
  await pool.query(
    `INSERT INTO ${table} SELECT 'repeat-' || i, $1 FROM generate_series(0, ${repeatPool - 1}) AS i`,
    [outcome],
  );
  const insert = {
    name: `bare-insert-${schema}`,
    text: `INSERT INTO ${table} (key, outcome) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
  };
  const select = { name: `bare-select-${schema}`, text: `SELECT outcome FROM ${table} WHERE key = $1` };
  let nextKey = 0;
  return {
    twoInserts: async () => {
      const key = `first-${nextKey++}`;
      await pool.query({ ...insert, values: [`${key}:claim`, outcome] });
      await pool.query({ ...insert, values: [`${key}:complete`, outcome] });
    },
    primaryKeySelect: async (index: number) => {
      const result = await pool.query({ ...select, values: [`repeat-${index % repeatPool}`] });
      if (result.rowCount !== 1) throw new Error('postgres baseline: the primary-key SELECT found no row');
    },
  };
}

export async function postgresSuite(): Promise<Row[]> {
  const pool = await connectPostgres(postgresPoolSize);
  const counted = countingPool(pool);
  const { store, schema, drop } = await throwawayPostgresStore(counted.pool, 'postgres');
  try {
    const baselines = await durableBaselines(pool, schema);
    const latency = await storeLatencyRows({
      label: 'postgres',
      guard: new Guard({ store }),
      baselines: {
        first: { name: '2×INSERT ON CONFLICT DO NOTHING', run: baselines.twoInserts },
        repeat: { name: 'PK SELECT', run: baselines.primaryKeySelect },
      },
      countRoundTrips: async (work) => {
        const before = counted.count();
        await work();
        // Postgres reports no per-statement server time without pg_stat_statements.
        return { roundTrips: counted.count() - before, serverMicroseconds: Number.NaN };
      },
      firstCallTarget: '<= 1.3',
      repeatTarget: '<= 1.3',
      // Postgres calls cost ten times Redis ones: fewer per round keep the suite within a minute.
      sizes: { sequential: 100, concurrent: 600, rounds: 5 },
    });
    // Beside the hot path: what a first call writes, and what the operator's listing costs.
    return [...latency, ...(await postgresWriteRows(schema)), ...(await listingRows('postgres', store))];
  } finally {
    await drop();
    await pool.end();
  }
}
