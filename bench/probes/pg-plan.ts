// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/pg-plan.ts
// Postgres repeat (claim of a completed record): does planning dominate? The same store, three
// plan_cache_mode settings, interleaved rounds of 300 sequential repeats, p50 ms; plus the PK SELECT.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';

const url = 'postgres://postgres@127.0.0.1:5452/test';
const schema = `plan_${Date.now()}`;
const mk = (mode: string) =>
  new pg.Pool({ connectionString: url, max: 1, options: `-c plan_cache_mode=${mode}` });
const pools = { auto: mk('auto'), generic: mk('force_generic_plan'), custom: mk('force_custom_plan') };
const stores = Object.fromEntries(
  Object.entries(pools).map(([k, p]) => [k, new PostgresStore({ pool: p, schema })]),
) as Record<string, PostgresStore>;
await stores.auto!.ensureSchema();
const key = (i: number) => i.toString(16).padStart(64, '0');
const opts = (o: string) => ({
  tool: 't',
  fingerprint: 'f'.repeat(64),
  owner: o,
  leaseMs: 30000,
  retentionMs: 86400000,
  mode: 'at-least-once' as const,
  maxAttempts: 3,
  checkFingerprint: false,
});
for (let i = 0; i < 300; i++) {
  const o = randomUUID();
  const c = await stores.auto!.claim({ tenant: 'd', key: key(i) }, opts(o));
  await stores.auto!.complete(
    { tenant: 'd', key: key(i) },
    { fence: (c as { fence: number }).fence, owner: o },
    '{"ok":true}',
    86400000,
  );
}
await pools.auto.query(`CREATE TABLE "${schema}".bare (key text PRIMARY KEY, outcome text)`);
await pools.auto.query(
  `INSERT INTO "${schema}".bare SELECT lpad(to_hex(i), 64, '0'), 'x' FROM generate_series(0, 299) i`,
);
const work: [string, (i: number) => Promise<unknown>][] = [
  ...Object.entries(stores).map(
    ([k, s]) =>
      [`repeat, plan_cache_mode=${k}`, (i: number) => s.claim({ tenant: 'd', key: key(i) }, opts('x'))] as [
        string,
        (i: number) => Promise<unknown>,
      ],
  ),
  [
    'PK SELECT (bare)',
    (i) =>
      pools.auto.query({
        name: 'pk',
        text: `SELECT outcome FROM "${schema}".bare WHERE key = $1`,
        values: [key(i)],
      }),
  ],
];
const s: Record<string, number[]> = {};
for (let r = 0; r < 7; r++)
  for (let o = 0; o < work.length; o++) {
    const [name, op] = work[(r + o) % work.length]!;
    const lat: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      await op(i);
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    if (r > 0) {
      s[name] ??= [];
      s[name].push(lat[150]!);
    }
  }
for (const [name, v] of Object.entries(s)) {
  v.sort((a, b) => a - b);
  console.log(name.padEnd(40), v[3]!.toFixed(3), 'ms p50');
}
const c = await pools.auto.connect();
await c.query(`PREPARE rp AS SELECT outcome FROM "${schema}".bare WHERE key = $1`);
for (const st of Object.values(stores)) await st.close();
c.release();
await pools.auto.query(`DROP SCHEMA "${schema}" CASCADE`);
for (const p of Object.values(pools)) await p.end();
