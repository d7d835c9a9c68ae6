import { randomUUID } from 'node:crypto';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { type Row, row } from './report.js';
import { databaseUrl } from './services.js';
import { median } from './stats.js';
import { outcome100, probeClaimOptions } from './workloads.js';

interface Sent {
  readonly text: string;
  readonly values: unknown[];
}

/** What EXPLAIN (ANALYZE, WAL) reports for one statement (it runs, and commits). */
async function explained(client: pg.Client, sent: Sent): Promise<{ wal: number; executionMs: number }> {
  const result = await client.query({
    text: `EXPLAIN (ANALYZE, WAL, FORMAT JSON) ${sent.text}`,
    values: sent.values,
  });
  type Explained = { Plan: Record<string, number>; 'Execution Time': number };
  const top = (result.rows[0] as { 'QUERY PLAN': Explained[] })['QUERY PLAN'][0]!;
  return { wal: top.Plan['WAL Bytes'] ?? 0, executionMs: top['Execution Time'] };
}

/**
 * What a first call writes on PostgreSQL: the WAL bytes of its two statements (the claim of a
 * new key and its complete, as the store sends them) against two single-row
 * `INSERT ... ON CONFLICT DO NOTHING` into a bare `(key, outcome)` table, each from
 * `EXPLAIN (ANALYZE, WAL)` of the statement on one connection (per statement, so other clients
 * of a shared server do not count; neither side counts its commit record); and the share of the
 * completes that were HOT updates (`pg_stat_user_tables`, this connection's counters flushed).
 */
export async function postgresWriteRows(schema: string, calls = 200): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const sent: Sent[] = [];
  // The store's statements, captured as sent: the queryable records and forwards each.
  // (A queryable of one's own is called as `query(text, values)`.)
  const spy = {
    query: (text: string, values: unknown[] = []) => {
      sent.push({ text, values: [...values] });
      return client.query(text, values);
    },
  };
  const store = new PostgresStore({ pool: spy, schema, table: 'wal_records', autoCleanup: false });
  try {
    await store.ensureSchema();
    const outcome = JSON.stringify(outcome100(0));
    const first = { tenant: 'wal', key: 'first' };
    const owner = randomUUID();
    sent.length = 0;
    const claimed = await store.claim(first, probeClaimOptions(owner));
    if (claimed.status !== 'acquired')
      throw new Error(`postgres writes: the claim answered ${claimed.status}`);
    await store.complete(first, { fence: claimed.fence, owner }, outcome, 86_400_000);
    if (sent.length !== 2) throw new Error(`postgres writes: a first call sent ${sent.length} statements`);
    const [claim, complete] = sent as [Sent, Sent];
    const bare = `"${schema}"."bare_wal"`;
    await client.query(`CREATE TABLE ${bare} (key text PRIMARY KEY, outcome text NOT NULL)`);
    const stats = async () => {
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      const { rows } = await client.query(
        `SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot FROM pg_stat_user_tables
          WHERE schemaname = $1 AND relname = 'wal_records'`,
        [schema],
      );
      return rows[0] as { updates: number; hot: number };
    };
    const before = await stats();
    let ours = 0;
    let completes = 0;
    let floor = 0;
    const executionMs: { ours: number[]; floor: number[] } = { ours: [], floor: [] };
    for (let at = 0; at < calls; at++) {
      const key = `k${at}`;
      const holder = randomUUID();
      // claim: $2 key, $5 owner; complete: $2 key, $3 fence (1: a new key), $4 owner.
      const claimed = await explained(client, {
        text: claim.text,
        values: claim.values.map((value, index) => (index === 1 ? key : index === 4 ? holder : value)),
      });
      const completed = await explained(client, {
        text: complete.text,
        values: complete.values.map((value, index) =>
          index === 1 ? key : index === 2 ? 1 : index === 3 ? holder : value,
        ),
      });
      ours += claimed.wal + completed.wal;
      completes += completed.wal;
      executionMs.ours.push(claimed.executionMs + completed.executionMs);
      let floorMs = 0;
      for (const half of ['claim', 'complete']) {
        const inserted = await explained(client, {
          text: `INSERT INTO ${bare} (key, outcome) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
          values: [`${key}:${half}`, outcome],
        });
        floor += inserted.wal;
        floorMs += inserted.executionMs;
      }
      executionMs.floor.push(floorMs);
    }
    const after = await stats();
    const updates = after.updates - before.updates;
    if (updates !== calls)
      throw new Error(`postgres writes: ${updates} updates counted for ${calls} completes`);
    return [
      row(
        'postgres: WAL bytes per first call, claim + complete (vs 2×INSERT ON CONFLICT DO NOTHING)',
        'bytes',
        ours / calls,
        floor / calls,
      ),
      row(
        'postgres: WAL bytes per complete (vs 1 INSERT ON CONFLICT DO NOTHING)',
        'bytes',
        completes / calls,
        floor / calls / 2,
      ),
      row(
        'postgres: executor time per first call, claim + complete, median (vs 2×INSERT ON CONFLICT DO NOTHING)',
        'ms',
        median(executionMs.ours),
        median(executionMs.floor),
      ),
      row(
        'postgres: completes that are HOT updates',
        '%',
        (100 * (after.hot - before.hot)) / updates,
        null,
        '>= 90',
      ),
    ];
  } finally {
    await store.close();
    await client.end();
  }
}
