// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/pg-explain.ts
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5452/test',
  max: 1,
});
const schema = `expl_${Date.now()}`;
const store = new PostgresStore({ pool, schema });
await store.ensureSchema();
const k = 'a'.repeat(64);
const o = randomUUID();
const opts = (ow: string) => ({
  tool: 't',
  fingerprint: 'f'.repeat(64),
  owner: ow,
  leaseMs: 30000,
  retentionMs: 86400000,
  mode: 'at-least-once' as const,
  maxAttempts: 3,
  checkFingerprint: false,
});
const c = await store.claim({ tenant: 'd', key: k }, opts(o));
await store.complete(
  { tenant: 'd', key: k },
  { fence: (c as { fence: number }).fence, owner: o },
  '{"ok":true}',
  86400000,
);
const sql = (store as unknown as { runner: { sql: { claim: string } } }).runner.sql.claim;
const lit = `'d', '${k}', 't', '${'f'.repeat(64)}', 'x', 30000, 86400000, 'at-least-once', 3, false`;
const client = await pool.connect();
await client.query(`PREPARE cl AS ${sql}`);
for (let i = 0; i < 8; i++) await client.query(`EXECUTE cl(${lit})`);
const plan = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) EXECUTE cl(${lit})`);
console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
const pk = await client.query(
  `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) SELECT outcome FROM ${store.tableName} WHERE tenant = 'd' AND key = '${k}'`,
);
console.log(pk.rows.map((r) => r['QUERY PLAN']).join('\n'));
client.release();
await store.close();
await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
await pool.end();
