// Migration 0009 on PostgreSQL: the indeterminate and abandoned records are listed from a partial
// index on `error_type IS NOT NULL` (the attention index), not a scan of the table, and a
// complete stays a HOT update beside it (hot-complete.postgres.test.ts). The plan is asserted,
// not a time: a table of 200,000 completed records and a few that need an operator.
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions } from '../../../test/support/claims.js';
import { createPool, dropSchema, requirePostgres, uniqueSchemaName } from '../../../test/support/postgres.js';
import { postgresNames, renderSql } from '../src/postgres/names.js';
import { listParameters } from '../src/postgres/operator-reads.js';
import { statements } from '../src/postgres/statements.js';
import { listQuery } from '../src/shared/sql-listing.js';

const ROWS = 200_000;
const schema = uniqueSchemaName('attention');
const names = postgresNames(schema, 'idempotency_records');
let pool: pg.Pool;
let store: PostgresStore;
const indeterminate: string[] = [];
const abandoned: string[] = [];

beforeAll(async () => {
  await requirePostgres();
  pool = createPool();
  store = new PostgresStore({ pool, schema, autoCleanup: false });
  await store.ensureSchema();
  // Completed records of 20 tenants, as a complete leaves them (no error_type).
  await pool.query(
    `INSERT INTO ${names.table} (tenant, key, tool, fingerprint, state, fence, attempt, owner, claimed_at,
       lease_expires_at, expires_at, sweep_at, retention_ms, outcome, waited, updated_at)
     SELECT 't' || (g % 20), md5(g::text), 'refund', 'f', 'completed', 1, 1, 'o',
            statement_timestamp(), statement_timestamp(), statement_timestamp() + interval '1 day',
            statement_timestamp() + interval '1 day', 86400000, '"ok"', false,
            date_trunc('milliseconds', statement_timestamp())
       FROM generate_series(1, $1::int) g`,
    [ROWS],
  );
  // Indeterminate records (markIndeterminate) and abandoned ones (the claim after an expired lease).
  for (let at = 0; at < 6; at++) {
    const ref = { tenant: `t${at % 3}`, key: `indeterminate-${at}` };
    const options = claimOptions();
    const claimed = await store.claim(ref, options);
    if (claimed.status !== 'acquired') throw new Error(`claim: ${claimed.status}`);
    await store.markIndeterminate(
      ref,
      { fence: claimed.fence, owner: options.owner },
      { type: 'Timeout', message: 'the call timed out' },
      86_400_000,
    );
    indeterminate.push(ref.key);
  }
  for (let at = 0; at < 4; at++) {
    const ref = { tenant: `t${at % 2}`, key: `abandoned-${at}` };
    expect((await store.claim(ref, claimOptions({ leaseMs: 1, maxAttempts: 1 }))).status).toBe('acquired');
    abandoned.push(ref.key);
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  for (const key of abandoned) {
    const ref = { tenant: `t${abandoned.indexOf(key) % 2}`, key };
    expect((await store.claim(ref, claimOptions({ maxAttempts: 1 }))).status).toBe('abandoned');
  }
  await pool.query(`ANALYZE ${names.table}`);
}, 120_000);

afterAll(async () => {
  await store?.close();
  await dropSchema(schema);
  await pool?.end();
});

/** The plan of a list statement, as the store sends it, for these list options. */
async function plan(text: string, options: Parameters<PostgresStore['list']>[0]): Promise<string> {
  const { rows } = await pool.query(
    `EXPLAIN (FORMAT JSON) ${renderSql(text, names.placeholders)}`,
    listParameters(options, listQuery(options)),
  );
  return JSON.stringify(rows[0]['QUERY PLAN']);
}

describe(`PostgresStore: listing the records an operator must look at among ${ROWS.toLocaleString('en-US')} (migration 0009)`, () => {
  it('every indeterminate and abandoned record carries an error_type (the index holds them all)', async () => {
    const { rows } = await pool.query(
      `SELECT state, count(*)::int AS rows, count(*) FILTER (WHERE error_type IS NULL)::int AS bare
         FROM ${names.table} WHERE state IN ('indeterminate', 'abandoned') GROUP BY state ORDER BY state`,
    );
    expect(rows).toEqual([
      { state: 'abandoned', rows: 4, bare: 0 },
      { state: 'indeterminate', rows: 6, bare: 0 },
    ]);
  });

  it('plans an index scan of the attention index, for one tenant and across tenants, in both orders', async () => {
    for (const text of [statements.listNewestAttention, statements.listOldestAttention]) {
      for (const options of [
        { tenant: 't0', states: ['indeterminate' as const], limit: 50 },
        { allTenants: true, states: ['indeterminate' as const, 'abandoned' as const], limit: 50 },
      ]) {
        const shown = await plan(text, options);
        expect(shown).toContain('"Index Name":"idempotency_records_attention"');
        expect(shown).not.toContain('Seq Scan');
      }
    }
    // The statement for other states reads the table: the index is what makes the difference.
    expect(
      await plan(statements.listNewest, { allTenants: true, states: ['indeterminate'], limit: 50 }),
    ).toContain('Seq Scan');
  });

  it('lists exactly those records, per tenant and across tenants, paging by cursor', async () => {
    const all = await store.list({ allTenants: true, states: ['indeterminate', 'abandoned'], limit: 50 });
    expect(all.records.map((record) => record.key).sort()).toEqual([...abandoned, ...indeterminate].sort());
    const one = await store.list({ tenant: 't1', states: ['indeterminate'], limit: 50 });
    expect(one.records.map((record) => record.key).sort()).toEqual(['indeterminate-1', 'indeterminate-4']);
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list({
        allTenants: true,
        states: ['indeterminate'],
        order: 'oldest',
        limit: 4,
        cursor,
      });
      keys.push(...page.records.map((record) => record.key));
      cursor = page.cursor;
    } while (cursor !== undefined);
    expect(keys.sort()).toEqual([...indeterminate].sort());
  });
});
