/**
 * The PostgreSQL service for tests, the fault suite and the benchmark: `DATABASE_URL` (default
 * postgres://postgres@127.0.0.1:5432/test), checked before use, one schema per test file (dropped
 * after). A missing server FAILS the run with a ServiceMissingError naming the command that
 * starts it: a store test that silently skips proves nothing.
 */
import { randomBytes } from 'node:crypto';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { ServiceMissingError } from './service-missing-error.js';

export const databaseUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const postgresStartCommand =
  'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

/** Throws a ServiceMissingError (failing the test) when PostgreSQL at `databaseUrl` does not answer. */
export async function requirePostgres(connectionTimeoutMillis = 5_000): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    // 3D000: the server answers but the database does not exist; starting the server won't help.
    const remedy =
      (error as { code?: unknown }).code === '3D000'
        ? `Create the database with: createdb -h 127.0.0.1 -U postgres ${new URL(databaseUrl).pathname.slice(1)}`
        : `Start it with: ${postgresStartCommand}`;
    throw new ServiceMissingError(
      `PostgreSQL is not reachable at ${databaseUrl} (${(error as Error).message}). ${remedy}  (or set DATABASE_URL)`,
      { cause: error },
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema name for one test file: `tf_<label>_<random>`. */
export function uniqueSchemaName(label: string): string {
  return `tf_${label}_${randomBytes(4).toString('hex')}`;
}

export function createPool(options: pg.PoolConfig = {}): pg.Pool {
  // Named, so a look at pg_stat_activity tells these connections from other suites' ones.
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    application_name: 'toolfence-postgres-tests',
    ...options,
  });
  // An idle client's error (e.g. a test terminating backends) must not crash the run.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A pool on `databaseUrl` once PostgreSQL answered (else a ServiceMissingError). Keep `max` small:
 * the server's connections are shared. Named by `application_name`, so a test that terminates
 * backends by name cannot take these.
 */
export async function connectPostgres(options: pg.PoolConfig = {}): Promise<pg.Pool> {
  await requirePostgres();
  return createPool(options);
}

/** Drops a schema and everything in it (idempotent). */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

/** A pool that can never connect (nothing listens on port 1), for "store is down" tests. */
export function createUnreachablePool(): pg.Pool {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = '1';
  return createPool({ connectionString: url.toString(), connectionTimeoutMillis: 2_000 });
}

/**
 * A migrated PostgresStore in a fresh schema of its own, for one test file. `teardown` closes the
 * store, drops the schema and ends the pool.
 */
export async function openPostgresStore(label: string): Promise<{
  store: PostgresStore;
  pool: pg.Pool;
  schema: string;
  teardown: () => Promise<void>;
}> {
  await requirePostgres();
  const schema = uniqueSchemaName(label);
  // Two full runs share the server (max_connections 100): 10 per store is plenty for the cases.
  const pool = createPool({ max: 10 });
  const store = new PostgresStore({ pool, schema });
  await store.ensureSchema();
  return {
    store,
    pool,
    schema,
    teardown: async () => {
      await store.close();
      await dropSchema(schema);
      await pool.end();
    },
  };
}

/**
 * Checks out a client to hold for a while. A checked-out pg client has no 'error' listener, so a
 * backend terminated while the client sits idle would crash the test process; this one records
 * the error instead (the next query on it fails and the test reports that).
 */
export async function holdClient(pool: pg.Pool): Promise<pg.PoolClient> {
  const client = await pool.connect();
  client.on('error', () => undefined);
  return client;
}
