// Issue 30, item 3: migrations as a large table needs them. Migration statements have their own
// deadline (none by default), 0004's backfill runs in batches of its own transactions and its
// indexes are built CONCURRENTLY, an interrupted migration resumes where it stopped, progress is
// reported, and `toolfence migrate` runs it out of band. The 1,000,000-row run is in
// test/large/migration.postgres.test.ts (`npm run test:large`).
import { randomUUID } from 'node:crypto';
import { type MigrationProgress, PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import {
  connectPostgres,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';
import { previousVersionTable, schemaShape } from '../../../test/support/postgres-migrations.js';
import { redisUrl } from '../../../test/support/redis.js';
import { runCli } from '../../../test/support/run-cli.js';

const schemas: string[] = [];
const stores: PostgresStore[] = [];
let pool: pg.Pool;

beforeAll(async () => {
  await requirePostgres();
  pool = await connectPostgres({ max: 6 });
});

afterAll(async () => {
  for (const store of stores) await store.close();
  for (const schema of schemas) await dropSchema(schema);
  await pool?.end();
});

function newStore(schema: string): PostgresStore {
  const store = new PostgresStore({ pool, schema, autoCleanup: false });
  stores.push(store);
  return store;
}

async function freshShape(): Promise<unknown> {
  const schema = uniqueSchemaName('fresh');
  schemas.push(schema);
  await newStore(schema).ensureSchema();
  return schemaShape(pool, schema);
}

describe('PostgresStore migrations on a table with rows (0003 → 0010)', () => {
  it('backfills in batches, reports progress, and ends with the schema a fresh store has', async () => {
    const { schema } = await previousVersionTable(pool, 3, 20_000);
    schemas.push(schema);
    const progress: MigrationProgress[] = [];
    const result = await newStore(schema).ensureSchema({
      batchSize: 1_000,
      onProgress: (p) => progress.push(p),
    });
    expect(result).toEqual({ applied: [4, 5, 6, 7, 8, 9, 10] });
    const backfill = progress.filter((p) => p.step === 'backfill updated_at');
    expect(backfill[0]).toMatchObject({ version: 4, phase: 'start', rows: 0, totalRows: 20_000 });
    expect(backfill.filter((p) => p.phase === 'progress')).toHaveLength(20);
    expect(backfill.at(-1)).toMatchObject({ phase: 'done', rows: 20_000 });
    expect(
      progress.map((p) => `${p.version} ${p.step} ${p.phase}`).filter((line) => !line.includes('progress')),
    ).toEqual([
      '4 transaction start',
      '4 transaction done',
      '4 backfill updated_at start',
      '4 backfill updated_at done',
      '4 updated_at not null start',
      '4 updated_at not null done',
      '4 index idempotency_records_list_tenant start',
      '4 index idempotency_records_list_tenant done',
      '4 index idempotency_records_list_all start',
      '4 index idempotency_records_list_all done',
      '5 transaction start',
      '5 transaction done',
      '6 transaction start',
      '6 transaction done',
      '7 transaction start',
      '7 transaction done',
      '8 transaction start',
      '8 transaction done',
      '8 backfill sweep_at start',
      '8 backfill sweep_at done',
      '8 index idempotency_records_sweep_at start',
      '8 index idempotency_records_sweep_at done',
      '8 drop the expires_at index start',
      '8 drop the expires_at index done',
      '8 drop the tenant listing index start',
      '8 drop the tenant listing index done',
      '8 drop the listing index across tenants start',
      '8 drop the listing index across tenants done',
      '9 transaction start',
      '9 transaction done',
      '9 index idempotency_records_attention start',
      '9 index idempotency_records_attention done',
      '10 transaction start',
      '10 transaction done',
      '10 validate the state CHECK start',
      '10 validate the state CHECK done',
      '10 validate the fence CHECK start',
      '10 validate the fence CHECK done',
      '10 validate the attempt CHECK start',
      '10 validate the attempt CHECK done',
    ]);
    // Every row took its claim time, and the schema is a fresh one's (NOT NULL, valid indexes).
    const table = `${schema}.idempotency_records`;
    const { rows } = await pool.query(
      `SELECT count(*) FILTER (WHERE updated_at IS DISTINCT FROM date_trunc('milliseconds', claimed_at))::int AS off
         FROM "${schema}".idempotency_records`,
    );
    expect(rows[0].off, table).toBe(0);
    // 0008: every row's sweep bound is its retention deadline.
    const swept = await pool.query(
      `SELECT count(*) FILTER (WHERE sweep_at IS DISTINCT FROM expires_at)::int AS off, count(*)::int AS rows
         FROM "${schema}".idempotency_records`,
    );
    expect(swept.rows[0]).toEqual({ off: 0, rows: 20_000 });
    expect(await schemaShape(pool, schema)).toEqual(await freshShape());
    const store = newStore(schema);
    expect(await store.ensureSchema()).toEqual({ applied: [] });
    expect((await store.claim(randomRef(), claimOptions())).status).toBe('acquired');
  });

  it('resumes an interrupted migration where it stopped: committed batches stay, a half-built index is rebuilt', async () => {
    const { schema } = await previousVersionTable(pool, 3, 10_000);
    schemas.push(schema);
    const stop = new Error('interrupted on purpose');
    let first = 0;
    const interrupted = await newStore(schema)
      .ensureSchema({
        batchSize: 1_000,
        onProgress: (p) => {
          if (p.step === 'backfill updated_at' && p.phase === 'progress' && (p.rows ?? 0) >= 3_000) {
            first = p.rows ?? 0;
            throw stop;
          }
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(interrupted).toBe(stop);
    expect(first).toBe(3_000);
    const versions = await pool.query(
      `SELECT version FROM "${schema}".idempotency_records_migrations ORDER BY 1`,
    );
    expect(versions.rows.map((row) => row.version)).toEqual([1, 2, 3]);
    // An index build that died half-way: present, INVALID (as CREATE INDEX CONCURRENTLY leaves it).
    await pool.query(
      `CREATE INDEX idempotency_records_list_all ON "${schema}".idempotency_records (updated_at)`,
    );
    await pool.query(
      `UPDATE pg_index SET indisvalid = false WHERE indexrelid = '"${schema}".idempotency_records_list_all'::regclass`,
    );
    const progress: MigrationProgress[] = [];
    expect(
      await newStore(schema).ensureSchema({ batchSize: 1_000, onProgress: (p) => progress.push(p) }),
    ).toEqual({
      applied: [4, 5, 6, 7, 8, 9, 10],
    });
    // Only what the first run left: 7,000 rows.
    expect(progress.filter((p) => p.step === 'backfill updated_at').at(-1)).toMatchObject({
      phase: 'done',
      rows: 7_000,
    });
    expect(await schemaShape(pool, schema)).toEqual(await freshShape());
  });

  it('a timeoutMs that runs out fails StoreUnavailableError saying it resumes; the next call finishes', async () => {
    const { schema } = await previousVersionTable(pool, 3, 30_000);
    schemas.push(schema);
    const error = await newStore(schema)
      .ensureSchema({ timeoutMs: 1, batchSize: 500 })
      .then(
        () => undefined,
        (caught: unknown) => caught as Error,
      );
    expect(error?.name).toBe('StoreUnavailableError');
    expect(error?.message).toContain(
      'did not finish within timeoutMs (1 ms); the next ensureSchema() resumes it',
    );
    expect(await newStore(schema).ensureSchema()).toEqual({ applied: [4, 5, 6, 7, 8, 9, 10] });
    await expect(newStore(schema).ensureSchema({ timeoutMs: 0 })).rejects.toThrow(RangeError);
  });

  it('`toolfence migrate` runs it out of band, as a real process, with progress; a second run finds it up to date', async () => {
    const { schema } = await previousVersionTable(pool, 3, 5_000);
    schemas.push(schema);
    const args = ['--store', databaseUrl, '--schema', schema, 'migrate'];
    const run = await runCli(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('migration 0004_listing: backfill updated_at done 5,000 of ~5,000 rows');
    expect(run.stdout).toMatch(/applied 4, 5, 6, 7, 8, 9, 10 in \d+\.\d s/);
    const again = await runCli([...args, '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.at(-1)).toMatchObject({ applied: [] });
    const redis = await runCli(['--store', redisUrl, '--prefix', `tf-migrate-${randomUUID()}`, 'migrate']);
    expect(redis.code, redis.stderr).toBe(0);
    expect(redis.stdout).toContain('nothing to migrate (this store keeps no schema)');
    const bad = await runCli([...args, '--timeout', '5']);
    expect(bad.code).toBe(2);
  }, 120_000); // four CLI processes
});
