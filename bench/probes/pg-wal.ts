// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/pg-wal.ts
// WAL bytes and HOT updates per statement of the Postgres store, on a private PostgreSQL (5452).
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';
import { probeClaimOptions } from '../lib/workloads.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5452/test',
  max: 2,
});
const schema = `walprobe_${Date.now()}`;
const store = new PostgresStore({ pool, schema });
await store.ensureSchema();
const table = store.tableName;
const N = 1000;
const lsn = async () => (await pool.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l as string;
const diff = async (a: string, b: string) =>
  Number((await pool.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [b, a])).rows[0].d);
const stat = async () =>
  (
    await pool.query(`SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = $1::regclass`, [
      table,
    ])
  ).rows[0];
const outcome = JSON.stringify({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });
const key = (i: number) => i.toString(16).padStart(64, '0');
const opts = probeClaimOptions;
async function measure(label: string, op: (i: number) => Promise<unknown>) {
  await pool.query('SELECT pg_stat_force_next_flush()').catch(() => {});
  const s0 = await stat();
  const a = await lsn();
  const t = performance.now();
  for (let i = 0; i < N; i++) await op(i);
  const ms = (performance.now() - t) / N;
  const b = await lsn();
  await new Promise((r) => setTimeout(r, 1200));
  const s1 = await stat();
  console.log(
    label.padEnd(52),
    ((await diff(a, b)) / N).toFixed(0).padStart(5),
    'WAL bytes/op',
    ms.toFixed(3),
    'ms/op',
    'upd',
    Number(s1.n_tup_upd) - Number(s0.n_tup_upd),
    'hot',
    Number(s1.n_tup_hot_upd) - Number(s0.n_tup_hot_upd),
  );
}
const held: { fence: number; owner: string }[] = [];
await measure('claim, fresh key (INSERT)', async (i) => {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  if (r.status !== 'acquired') throw new Error(r.status);
  held[i] = { fence: r.fence, owner: o };
});
await measure('complete (UPDATE state, outcome, expires_at)', async (i) => {
  const r = await store.complete({ tenant: 'default', key: key(i) }, held[i]!, outcome, 86400000);
  if (r.status !== 'completed') throw new Error(r.status);
});
await measure('claim, completed = repeat (read-only path)', async (i) => {
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts('x'));
  if (r.status !== 'completed') throw new Error(r.status);
});
// Baselines and variants on bare / the same table.
await pool.query(`CREATE TABLE "${schema}".bare (key text PRIMARY KEY, outcome text NOT NULL)`);
await measure('baseline: INSERT ON CONFLICT DO NOTHING (bare)', (i) =>
  pool.query({
    name: 'b1',
    text: `INSERT INTO "${schema}".bare VALUES ($1, $2) ON CONFLICT DO NOTHING`,
    values: [key(i), outcome],
  }),
);
await measure('baseline: PK SELECT (bare)', (i) =>
  pool.query({ name: 'b2', text: `SELECT outcome FROM "${schema}".bare WHERE key = $1`, values: [key(i)] }),
);
// Variant: a complete that leaves expires_at (the indexed column) alone can be HOT.
for (let i = N; i < 2 * N; i++) {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  held[i] = { fence: (r as { fence: number }).fence, owner: o };
}
await measure('variant: UPDATE state+outcome, expires_at unchanged', (i) =>
  pool.query({
    name: 'v1',
    text: `UPDATE ${table} SET state = 'completed', outcome = $3, outcome_bytes = convert_to($3, 'UTF8') WHERE tenant = $1 AND key = $2`,
    values: ['default', key(N + i), outcome],
  }),
);
for (let i = 2 * N; i < 3 * N; i++) {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  held[i] = { fence: (r as { fence: number }).fence, owner: o };
}
await measure('variant: same, outcome text only (no outcome_bytes)', (i) =>
  pool.query({
    name: 'v2',
    text: `UPDATE ${table} SET state = 'completed', outcome = $3 WHERE tenant = $1 AND key = $2`,
    values: ['default', key(2 * N + i), outcome],
  }),
);
for (let i = 3 * N; i < 4 * N; i++) {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  held[i] = { fence: (r as { fence: number }).fence, owner: o };
}
await measure('variant: UPDATE state+outcome+expires_at (as complete)', (i) =>
  pool.query({
    name: 'v3',
    text: `UPDATE ${table} SET state = 'completed', outcome = $3, outcome_bytes = convert_to($3, 'UTF8'), expires_at = statement_timestamp() + interval '1 day' WHERE tenant = $1 AND key = $2`,
    values: ['default', key(3 * N + i), outcome],
  }),
);
// Variant: the same complete UPDATE with the two partial listing indexes of 0004 dropped. Their
// predicate names `state` and their key `updated_at`, so while they exist no complete can be HOT.
await pool.query(
  `DROP INDEX "${schema}".idempotency_records_list_tenant, "${schema}".idempotency_records_list_all`,
);
for (let i = 4 * N; i < 5 * N; i++) {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  held[i] = { fence: (r as { fence: number }).fence, owner: o };
}
await measure('variant: complete, listing indexes dropped', async (i) => {
  const r = await store.complete(
    { tenant: 'default', key: key(4 * N + i) },
    held[4 * N + i]!,
    outcome,
    86400000,
  );
  if (r.status !== 'completed') throw new Error(r.status);
});
for (let i = 5 * N; i < 6 * N; i++) {
  const o = randomUUID();
  const r = await store.claim({ tenant: 'default', key: key(i) }, opts(o));
  held[i] = { fence: (r as { fence: number }).fence, owner: o };
}
await measure('variant: state+outcome, expires_at kept, no listing idx', (i) =>
  pool.query({
    name: 'v4',
    text: `UPDATE ${table} SET state = 'completed', outcome = $3 WHERE tenant = $1 AND key = $2`,
    values: ['default', key(5 * N + i), outcome],
  }),
);
const plan = await pool.query(
  `EXPLAIN (ANALYZE, BUFFERS, WAL, COSTS OFF) UPDATE ${table} SET state = 'completed', expires_at = statement_timestamp() + interval '1 day' WHERE tenant = 'default' AND key = '${key(5)}'`,
);
console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
const cols = await pool.query(
  `SELECT attname, atttypid::regtype FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
  [table],
);
console.log(cols.rows.map((r) => `${r.attname}:${r.atttypid}`).join(' '));
const idx = await pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1`, [schema]);
console.log(idx.rows.map((r) => r.indexdef).join('\n'));
await store.close();
await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
await pool.end();
