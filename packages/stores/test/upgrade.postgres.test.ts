// PostgresStore on a database written by the previous version (migrations 0001–0004 only): the
// claim function of migration 0005 takes over every kind of record the old claim statement left,
// and cleanup() deletes expired resolution entries (0004's journal) as well as expired records.
import { randomUUID } from 'node:crypto';
import { StoreConfigurationError } from '@toolfence/core';
import { PostgresStore } from '@toolfence/stores/postgres';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { connectPostgres, dropSchema, uniqueSchemaName } from '../../../test/support/postgres.js';
import { applyMigration } from '../../../test/support/postgres-migrations.js';
import { postgresNames, renderSql } from '../src/postgres/names.js';
import { migrations, statements } from '../src/postgres/statements.js';

const schemas: string[] = [];
const stores: PostgresStore[] = [];
let pool: pg.Pool;

beforeAll(async () => {
  pool = await connectPostgres({ max: 4 });
});

afterAll(async () => {
  for (const store of stores) await store.close();
  for (const schema of schemas) await dropSchema(schema);
  await pool?.end();
});

/** A schema as the previous version left it: migrations 0001–0004 applied and recorded. */
async function previousVersionSchema(): Promise<{ schema: string; table: string; resolutions: string }> {
  const schema = uniqueSchemaName('upgrade');
  schemas.push(schema);
  const names = postgresNames(schema, 'idempotency_records');
  await pool.query(`CREATE SCHEMA ${names.schema}`);
  await pool.query(renderSql(statements.ensureMigrationsTable, names.placeholders));
  for (const migration of migrations.filter((each) => each.version <= 4)) {
    await applyMigration(pool, names.placeholders, migration.text, migration.name);
    await pool.query(`INSERT INTO ${names.placeholders.migrations_table} (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
  }
  return {
    schema,
    table: names.table,
    resolutions: names.placeholders.resolutions_table as string,
  };
}

/** One row as the previous version's statements write it (every column of 0001–0004). */
async function oldRow(
  table: string,
  row: {
    tenant: string;
    key: string;
    state: string;
    owner: string;
    leaseMs: number;
    outcome?: string | null;
    outcomeBytes?: Buffer | null;
    errorType?: string | null;
  },
): Promise<void> {
  await pool.query(
    `INSERT INTO ${table} (tenant, key, tool, fingerprint, state, fence, attempt, owner, claimed_at,
       lease_expires_at, expires_at, retention_ms, outcome, outcome_bytes, error_type, error_message,
       waited, updated_at)
     VALUES ($1, $2, 'refund', $3, $4, 1, 1, $5, statement_timestamp(),
       statement_timestamp() + $6::float8 * interval '1 millisecond',
       statement_timestamp() + interval '1 day', 86400000, $7, $8, $9, $10, false,
       date_trunc('milliseconds', statement_timestamp()))`,
    [
      row.tenant,
      row.key,
      'f'.repeat(64),
      row.state,
      row.owner,
      row.leaseMs,
      row.outcome ?? null,
      row.outcomeBytes ?? null,
      row.errorType ?? null,
      row.errorType === undefined || row.errorType === null ? null : 'lost',
    ],
  );
}

describe('PostgresStore over records of the previous version (migration 0005)', () => {
  it('applies only 0005 and decides on every old row as the old claim statement did', async () => {
    const { schema, table } = await previousVersionSchema();
    const tenant = `up-${randomUUID().slice(0, 8)}`;
    const refs = {
      text: randomRef(tenant),
      bytes: randomRef(tenant),
      lapsed: randomRef(tenant),
      held: randomRef(tenant),
      unknown: randomRef(tenant),
    };
    await oldRow(table, { ...refs.text, state: 'completed', owner: 'o1', leaseMs: 1, outcome: '{"v":1}' });
    await oldRow(table, {
      ...refs.bytes,
      state: 'completed',
      owner: 'o2',
      leaseMs: 1,
      outcomeBytes: Buffer.from('a\u0000b', 'utf8'),
    });
    await oldRow(table, { ...refs.lapsed, state: 'in_progress', owner: 'o3', leaseMs: -1_000 });
    await oldRow(table, { ...refs.held, state: 'in_progress', owner: 'holder', leaseMs: 60_000 });
    await oldRow(table, {
      ...refs.unknown,
      state: 'indeterminate',
      owner: 'o5',
      leaseMs: -1_000,
      errorType: 'LeaseExpired',
    });

    const store = new PostgresStore({ pool, schema, autoCleanup: false });
    stores.push(store);
    // Before 0005 is applied, a claim names the fix (42883: no claim function), nothing written.
    const early = await store.claim(refs.text, claimOptions()).catch((error: unknown) => error);
    expect(StoreConfigurationError.isInstance(early), String(early)).toBe(true);
    expect(String((early as Error).message)).toContain('ensureSchema()');
    expect(await store.ensureSchema()).toEqual({ applied: [5, 6, 7, 8, 9, 10] });

    expect(await store.claim(refs.text, claimOptions())).toMatchObject({
      status: 'completed',
      record: { outcome: '{"v":1}', fence: 1 },
    });
    expect(await store.claim(refs.bytes, claimOptions())).toMatchObject({
      status: 'completed',
      record: { outcome: 'a\u0000b' },
    });
    expect(await store.claim(refs.unknown, claimOptions())).toMatchObject({
      status: 'indeterminate',
      record: { error: { type: 'LeaseExpired', message: 'lost' } },
    });
    const busy = await store.claim(refs.held, claimOptions());
    expect(busy).toMatchObject({ status: 'busy', record: { owner: 'holder' } });
    // The old holder resending its claim is answered as the first time, then completes.
    const resent = await store.claim(refs.held, claimOptions({ owner: 'holder' }));
    expect(resent).toMatchObject({ status: 'acquired', fence: 1, attempt: 1, takeover: false });
    expect(await store.complete(refs.held, { fence: 1, owner: 'holder' }, '"done"', 60_000)).toMatchObject({
      status: 'completed',
    });
    const takeover = await store.claim(refs.lapsed, claimOptions());
    expect(takeover).toMatchObject({ status: 'acquired', fence: 2, attempt: 2, takeover: true });
    // The old holder of the lapsed row is fenced out.
    expect(await store.complete(refs.lapsed, { fence: 1, owner: 'o3' }, '"late"', 60_000)).toMatchObject({
      status: 'stale',
    });
    expect((await store.get(refs.held))?.outcome).toBe('"done"');
    // Run again: nothing left to apply.
    expect(await store.ensureSchema()).toEqual({ applied: [] });
  });
});

describe('PostgresStore.cleanup and the resolution journal', () => {
  it('deletes expired resolution entries too, live ones stay, at most `limit` rows per call', async () => {
    const { schema, table, resolutions } = await previousVersionSchema();
    const store = new PostgresStore({ pool, schema, autoCleanup: false });
    stores.push(store);
    await store.ensureSchema();
    const tenant = `journal-${randomUUID().slice(0, 8)}`;
    // 12 indeterminate records resolved with a 1 ms retention (their entries expire at once), and
    // one resolved with a day's retention.
    const resolveOne = async (retentionMs: number) => {
      const target = randomRef(tenant);
      await oldRow(table, {
        ...target,
        state: 'indeterminate',
        owner: 'o',
        leaseMs: -1,
        errorType: 'LeaseExpired',
      });
      expect(await store.resolve(target, { released: true, by: 'ops' }, retentionMs)).toEqual({
        status: 'resolved',
      });
      return target;
    };
    const expired = [];
    for (let index = 0; index < 12; index++) expired.push(await resolveOne(1));
    const kept = await resolveOne(86_400_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const entries = async () =>
      Number(
        (await pool.query(`SELECT count(*) FROM ${resolutions} WHERE tenant = $1`, [tenant])).rows[0].count,
      );
    expect(await entries()).toBe(13);
    expect(await store.resolutions(expired[0]!)).toEqual([]);

    // Each call deletes at most 5 rows, records and entries together; the loop drains both.
    const batches: number[] = [];
    for (let batch = await store.cleanup({ limit: 5 }); ; batch = await store.cleanup({ limit: 5 })) {
      batches.push(batch);
      if (batch < 5) break;
    }
    expect(batches).toEqual([5, 5, 2]);
    expect(await entries()).toBe(1);
    expect(await store.resolutions(kept)).toMatchObject([{ action: 'released', by: 'ops' }]);
  });

  it('deletes expired records before expired entries in one call, within the same limit', async () => {
    const { schema, table, resolutions } = await previousVersionSchema();
    const store = new PostgresStore({ pool, schema, autoCleanup: false });
    stores.push(store);
    await store.ensureSchema();
    const tenant = `both-${randomUUID().slice(0, 8)}`;
    for (let index = 0; index < 3; index++) {
      const target = randomRef(tenant);
      const options = claimOptions({ leaseMs: 10, retentionMs: 1 });
      await store.claim(target, options);
      await store.complete(target, { fence: 1, owner: options.owner }, '"old"', 1);
    }
    await pool.query(
      `INSERT INTO ${resolutions} (tenant, key, tool, action, from_state, fence, attempt, resolved_at, expires_at)
       SELECT $1, 'k' || i, 'refund', 'released', 'abandoned', 1, 1, now() - interval '2 days', now() - interval '1 day'
       FROM generate_series(1, 4) AS i`,
      [tenant],
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    const count = async (of: string) =>
      Number((await pool.query(`SELECT count(*) FROM ${of} WHERE tenant = $1`, [tenant])).rows[0].count);
    expect(await store.cleanup({ limit: 5 })).toBe(5);
    expect(await count(table)).toBe(0);
    expect(await count(resolutions)).toBe(2);
    expect(await store.cleanup({ limit: 5 })).toBe(2);
    expect(await count(resolutions)).toBe(0);
    expect(await store.cleanup({ limit: 5 })).toBe(0);
  });
});
