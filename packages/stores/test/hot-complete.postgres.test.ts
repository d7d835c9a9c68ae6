// Migration 0008 on PostgreSQL: a complete inside its lease changes no indexed column, so it is a
// HOT update; the sweep finds records by `sweep_at`, an upper bound of `expires_at` that every
// write keeps, and never deletes a live record; the listing still answers without its indexes.
import { randomBytes } from 'node:crypto';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions } from '../../../test/support/claims.js';
import {
  createPool,
  databaseUrl,
  dropSchema,
  requirePostgres,
  uniqueSchemaName,
} from '../../../test/support/postgres.js';

const schema = uniqueSchemaName('hotcomplete');
let pool: pg.Pool;
let store: PostgresStore;

beforeAll(async () => {
  await requirePostgres();
  pool = createPool();
  store = new PostgresStore({ pool, schema, autoCleanup: false });
  await store.ensureSchema();
});

afterAll(async () => {
  await store?.close();
  await dropSchema(schema);
  await pool?.end();
});

const tenant = () => `hot-${randomBytes(4).toString('hex')}`;

async function bounds(ref: { tenant: string; key: string }) {
  const { rows } = await pool.query(
    `SELECT extract(epoch FROM expires_at) * 1000 AS expires_ms, extract(epoch FROM sweep_at) * 1000 AS sweep_ms
       FROM "${schema}".idempotency_records WHERE tenant = $1 AND key = $2`,
    [ref.tenant, ref.key],
  );
  return { expiresMs: Number(rows[0].expires_ms), sweepMs: Number(rows[0].sweep_ms) };
}

describe('PostgresStore: a complete is a HOT update (migration 0008)', () => {
  it('indexes only the primary key, sweep_at and the attention index (0009) on the records table', async () => {
    const { rows } = await pool.query(
      `SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'idempotency_records' ORDER BY 1`,
      [schema],
    );
    expect(rows.map((row) => row.indexname)).toEqual([
      'idempotency_records_attention',
      'idempotency_records_pkey',
      'idempotency_records_sweep_at',
    ]);
  });

  it('completes of records claimed on one connection are all HOT updates', async () => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const single = new PostgresStore({ pool: client, schema, autoCleanup: false });
    try {
      const stats = async () => {
        const { rows } = await pool.query(
          `SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
            WHERE schemaname = $1 AND relname = 'idempotency_records'`,
          [schema],
        );
        return rows[0] as { updates: number; hot: number };
      };
      // This connection's counters reach the shared statistics at its next statement's end.
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      const before = await stats();
      const calls = 40;
      const owner = tenant();
      for (let at = 0; at < calls; at++) {
        const ref = { tenant: owner, key: `k${at}` };
        const options = claimOptions({ leaseMs: 60_000, retentionMs: 600_000 });
        const claimed = await single.claim(ref, options);
        expect(claimed.status).toBe('acquired');
        const done = await single.complete(ref, { fence: 1, owner: options.owner }, '"done"', 600_000);
        expect(done.status).toBe('completed');
      }
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      const after = await stats();
      expect({ updates: after.updates - before.updates, hot: after.hot - before.hot }).toEqual({
        updates: calls,
        hot: calls,
      });
    } finally {
      await single.close();
      await client.end();
    }
  });

  it('keeps sweep_at at or above expires_at on every write, unchanged by a complete inside its lease', async () => {
    const ref = { tenant: tenant(), key: 'bounds' };
    const options = claimOptions({ leaseMs: 60_000, retentionMs: 1_000 });
    await store.claim(ref, options);
    const claimed = await bounds(ref);
    expect(claimed.sweepMs).toBe(claimed.expiresMs);
    await store.renew(ref, { fence: 1, owner: options.owner }, 120_000);
    const renewed = await bounds(ref);
    expect(renewed.sweepMs).toBe(renewed.expiresMs);
    expect(renewed.sweepMs).toBeGreaterThan(claimed.sweepMs);
    await store.complete(ref, { fence: 1, owner: options.owner }, '"done"', 1_000);
    const completed = await bounds(ref);
    expect(completed.sweepMs).toBe(renewed.sweepMs);
    expect(completed.expiresMs).toBeLessThan(completed.sweepMs);
  });

  it('a complete after its lease raises sweep_at to the new deadline', async () => {
    const ref = { tenant: tenant(), key: 'late' };
    const options = claimOptions({ leaseMs: 20, retentionMs: 60_000 });
    await store.claim(ref, options);
    const claimed = await bounds(ref);
    await new Promise((resolve) => setTimeout(resolve, 40));
    const done = await store.complete(ref, { fence: 1, owner: options.owner }, '"done"', 600_000);
    expect(done.status).toBe('completed');
    const completed = await bounds(ref);
    expect(completed.sweepMs).toBe(completed.expiresMs);
    expect(completed.sweepMs).toBeGreaterThan(claimed.sweepMs + 500_000);
  });

  it('cleanup deletes a record past both deadlines, never one that is still live', async () => {
    const owner = tenant();
    const gone = { tenant: owner, key: 'gone' };
    const live = { tenant: owner, key: 'live' };
    const short = claimOptions({ leaseMs: 20, retentionMs: 1 });
    await store.claim(gone, short);
    await store.complete(gone, { fence: 1, owner: short.owner }, '"done"', 1);
    // live: its sweep bound passes (written by hand as a previous version could leave it) while
    // its retention has not.
    const kept = claimOptions({ leaseMs: 60_000, retentionMs: 600_000 });
    await store.claim(live, kept);
    await pool.query(
      `UPDATE "${schema}".idempotency_records SET sweep_at = now() - interval '1 second' WHERE tenant = $1 AND key = $2`,
      [live.tenant, live.key],
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await store.cleanup({ limit: 1_000 })).toBeGreaterThanOrEqual(1);
    const { rows } = await pool.query(
      `SELECT key FROM "${schema}".idempotency_records WHERE tenant = $1 ORDER BY key`,
      [owner],
    );
    expect(rows.map((row) => row.key)).toEqual(['live']);
    expect(await store.get(live)).toMatchObject({ state: 'in_progress' });
  });

  it('a row inserted without sweep_at (a store from before 0005) gets the insert time, and is swept once expired', async () => {
    const owner = tenant();
    // As the INSERT of a store at 0003/0004 writes it: no sweep_at.
    const insertOld = (key: string, expires: string) =>
      pool.query(
        `INSERT INTO "${schema}".idempotency_records (tenant, key, tool, fingerprint, state, fence, attempt, owner,
           claimed_at, lease_expires_at, expires_at, retention_ms, waited)
         VALUES ($1, $2, 'refund', 'f', 'in_progress', 1, 1, 'o', now(), now(), now() + $3::interval, 1, false)
         RETURNING sweep_at IS NOT NULL AS bounded, sweep_at <= expires_at AS below`,
        [owner, key, expires],
      );
    const expired = await insertOld('old-expired', '-1 second');
    const live = await insertOld('old-live', '1 day');
    expect(expired.rows[0]).toEqual({ bounded: true, below: false });
    expect(live.rows[0]).toEqual({ bounded: true, below: true });
    expect(await store.cleanup({ limit: 1_000 })).toBeGreaterThanOrEqual(1);
    const { rows } = await pool.query(
      `SELECT key FROM "${schema}".idempotency_records WHERE tenant = $1 ORDER BY key`,
      [owner],
    );
    expect(rows.map((row) => row.key)).toEqual(['old-live']);
  });
});
