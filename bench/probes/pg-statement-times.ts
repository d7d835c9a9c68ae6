// Probe behind bench/RESULTS.md (not a benchmark suite), issue 31:
//   npx tsx --conditions=@toolfence/source bench/probes/pg-statement-times.ts
// Executor and planning time (EXPLAIN ANALYZE, medians of 200) of a first call's two statements
// as the store sends them: the claim of a new key and its complete.
import { randomUUID } from 'node:crypto';
import { PostgresStore } from '@toolfence/stores/postgres';
import pg from 'pg';
import { outcome100, probeClaimOptions } from '../lib/workloads.js';

const client = new pg.Client({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
});
await client.connect();
const schema = `split_${Date.now()}`;
const sent: { text: string; values: unknown[] }[] = [];
const spy = {
  query: (text: string, values: unknown[] = []) => {
    sent.push({ text, values: [...values] });
    return client.query(text, values);
  },
};
const store = new PostgresStore({ pool: spy, schema, autoCleanup: false });
await store.ensureSchema();
const outcome = JSON.stringify(outcome100(0));
sent.length = 0;
const o = randomUUID();
await store.claim({ tenant: 't', key: 'x' }, probeClaimOptions(o));
await store.complete({ tenant: 't', key: 'x' }, { fence: 1, owner: o }, outcome, 86400000);
const [claim, complete] = sent;
const t: Record<string, number[]> = { claim: [], complete: [], claimPlan: [], completePlan: [] };
for (let i = 0; i < 200; i++) {
  const h = randomUUID();
  const key = `k${i}`;
  const a = (
    await client.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${claim!.text}`,
      claim!.values.map((v, j) => (j === 1 ? key : j === 4 ? h : v)),
    )
  ).rows[0]['QUERY PLAN'][0];
  const b = (
    await client.query(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${complete!.text}`,
      complete!.values.map((v, j) => (j === 1 ? key : j === 2 ? 1 : j === 3 ? h : v)),
    )
  ).rows[0]['QUERY PLAN'][0];
  t.claim!.push(a['Execution Time']);
  t.complete!.push(b['Execution Time']);
  t.claimPlan!.push(a['Planning Time']);
  t.completePlan!.push(b['Planning Time']);
}
const med = (x: number[]) => [...x].sort((p, q) => p - q)[x.length >> 1];
console.log(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, med(v)])));
await client.query(`DROP SCHEMA "${schema}" CASCADE`);
await client.end();
