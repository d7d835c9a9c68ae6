// Probe behind bench/RESULTS.md (not a benchmark suite), issue 22 run 3:
//   DATABASE_URL=postgres://postgres@127.0.0.1:5461/test \
//     npx tsx --conditions=@toolfence/source bench/probes/pg-claim-paths.ts /tmp/claim-old.sql [plan_cache_mode]
// (the old statement: `git show f349c7d:packages/stores/src/postgres/sql/claim.sql > /tmp/claim-old.sql`.)
// The repeat (a claim of a completed record) three ways on one connection, interleaved rounds:
// the claim statement before migration 0005 (one statement, INSERT branch set up), the claim
// function of 0005, and the bare primary-key SELECT of the same row. Then EXPLAIN (ANALYZE,
// BUFFERS) of each, and the WAL bytes of a fresh claim through each.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';
import { renderSql } from '../../packages/stores/src/postgres/names.js';
import { probeClaimOptions } from '../lib/workloads.js';

const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5461/test',
  max: 2,
});
const schema = `claimpaths_${Date.now()}`;
const store = new PostgresStore({ pool, schema, autoCleanup: false });
await store.ensureSchema();
const internals = store as unknown as {
  runner: { sql: { claim: string } };
  names: { placeholders: Record<string, string> };
};
const newSql = internals.runner.sql.claim;
const oldSql = renderSql(
  readFileSync(process.argv[2] ?? '/tmp/claim-old.sql', 'utf8').replace(
    /^-- @include record-columns$/m,
    readFileSync(
      new URL('../../packages/stores/src/postgres/statements/fragments/record-columns.sql', import.meta.url),
      'utf8',
    )
      .replace(/^(--.*\n)+/, '')
      .trimEnd(),
  ),
  internals.names.placeholders,
);
const opts = probeClaimOptions;
const outcome = JSON.stringify({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });
const target = { tenant: 'default', key: 'a'.repeat(64) };
const owner = randomUUID();
const claimed = await store.claim(target, opts(owner));
await store.complete(target, { fence: (claimed as { fence: number }).fence, owner }, outcome, 86400000);
const args = (key: string, o: string) => [
  target.tenant,
  key,
  'place_order',
  'f'.repeat(64),
  o,
  30000,
  86400000,
  'at-least-once',
  3,
  false,
  null,
  null,
  null,
];
const client = await pool.connect();
const table = store.tableName;
const runs = {
  old: () => client.query({ name: 'old', text: oldSql, values: args(target.key, 'x') }),
  new: () => client.query({ name: 'new', text: newSql, values: args(target.key, 'x') }),
  pk: () =>
    client.query({
      name: 'pk',
      text: `SELECT outcome FROM ${table} WHERE tenant = $1 AND key = $2`,
      values: [target.tenant, target.key],
    }),
};
const samples: Record<string, number[]> = { old: [], new: [], pk: [] };
for (let round = 0; round < 9; round++) {
  for (const [name, run] of Object.entries(runs)) {
    for (let i = 0; i < 20; i++) await run(); // warm (generic plan after 5)
    const t = performance.now();
    for (let i = 0; i < 300; i++) await run();
    samples[name]!.push(((performance.now() - t) / 300) * 1000);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [name, xs] of Object.entries(samples))
  console.log(`repeat ${name.padEnd(4)} ${median(xs).toFixed(1)} µs per call (median of 9 rounds of 300)`);
const lit = `'default', '${target.key}', 'place_order', '${'f'.repeat(64)}', 'x', 30000, 86400000, 'at-least-once', 3, false, NULL, NULL, NULL`;
await client.query(`PREPARE old_p AS ${oldSql}`);
await client.query(`PREPARE new_p AS ${newSql}`);
for (let i = 0; i < 8; i++) {
  await client.query(`EXECUTE old_p(${lit})`);
  await client.query(`EXECUTE new_p(${lit})`);
}
for (const name of ['old_p', 'new_p']) {
  const plan = await client.query(
    `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, SUMMARY ON) EXECUTE ${name}(${lit})`,
  );
  const lines = plan.rows.map((r) => r['QUERY PLAN'] as string);
  console.log(
    name,
    lines
      .filter((l) => /Execution Time|Planning Time|^\s*Buffers/.test(l))
      .slice(-3)
      .join(' | '),
  );
}
// Executor time (EXPLAIN ANALYZE) of the repeat and of a fresh claim through each, medians of
// 41 interleaved executions: less moved by other load than the round trip.
const executionMs = async (statement: string, key: string) => {
  const l = lit.replace(`'${target.key}'`, `'${key}'`).replace(`'x'`, `'${randomUUID()}'`);
  const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) EXECUTE ${statement}(${l})`);
  const line = plan.rows.map((r) => r['QUERY PLAN'] as string).find((t) => t.startsWith('Execution Time'));
  return Number(/([\d.]+) ms/.exec(line ?? '')?.[1]);
};
const planMode = process.argv[3]; // e.g. force_generic_plan (default: the server's)
if (planMode) await client.query(`SET plan_cache_mode = ${planMode}`);
const executions: Record<string, number[]> = {
  'repeat old': [],
  'repeat new': [],
  'fresh old': [],
  'fresh new': [],
};
for (let i = 0; i < 41; i++) {
  executions['repeat old']!.push(await executionMs('old_p', target.key));
  executions['repeat new']!.push(await executionMs('new_p', target.key));
  executions['fresh old']!.push(await executionMs('old_p', `xo-${i}`));
  executions['fresh new']!.push(await executionMs('new_p', `xn-${i}`));
}
for (const [name, xs] of Object.entries(executions))
  console.log(`execution time, ${name.padEnd(10)} ${median(xs).toFixed(3)} ms (median of 41)`);
// Planning time of each statement sent unnamed (preparedStatements: false, or a pooler that
// keeps no prepared statements): every call plans it again. Medians of 21.
const planning: Record<string, number[]> = { old: [], new: [] };
for (let i = 0; i < 21; i++) {
  for (const name of ['old', 'new'] as const) {
    const text = (name === 'old' ? oldSql : newSql).replace(/\$(\d+)(::\w+)?/g, (_m, n: string) => {
      const values = lit.split(', ');
      return values[Number(n) - 1] as string;
    });
    const plan = await client.query(`EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) ${text}`);
    const line = plan.rows.map((r) => r['QUERY PLAN'] as string).find((t) => t.startsWith('Planning Time'));
    planning[name]!.push(Number(/([\d.]+) ms/.exec(line ?? '')?.[1]));
  }
}
for (const [name, xs] of Object.entries(planning))
  console.log(`planning time, unnamed ${name.padEnd(4)} ${median(xs).toFixed(3)} ms (median of 21)`);
const lsn = async () => (await client.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l as string;
for (const name of ['old', 'new'] as const) {
  const text = name === 'old' ? oldSql : newSql;
  const a = await lsn();
  for (let i = 0; i < 500; i++)
    await client.query({ name: `${name}-fresh`, text, values: args(`${name}-${i}`, randomUUID()) });
  const b = await lsn();
  const d = (await client.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [b, a])).rows[0].d;
  console.log(`fresh claim ${name}: ${(Number(d) / 500).toFixed(0)} WAL bytes per claim`);
}
// CPU of a fresh claim (the INSERT path) through each, commits not waited for
// (synchronous_commit off in this session only), interleaved rounds.
await client.query('SET synchronous_commit = off');
const fresh: Record<string, number[]> = { old: [], new: [] };
for (let round = 0; round < 7; round++) {
  for (const name of ['old', 'new'] as const) {
    const text = name === 'old' ? oldSql : newSql;
    const t = performance.now();
    for (let i = 0; i < 300; i++)
      await client.query({
        name: `${name}-fresh`,
        text,
        values: args(`${name}-r${round}-${i}`, randomUUID()),
      });
    fresh[name]!.push(((performance.now() - t) / 300) * 1000);
  }
}
for (const [name, xs] of Object.entries(fresh))
  console.log(
    `fresh claim ${name.padEnd(4)} ${median(xs).toFixed(1)} µs per call, synchronous_commit off (median of 7 rounds of 300)`,
  );
client.release();
await store.close();
await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
await pool.end();
