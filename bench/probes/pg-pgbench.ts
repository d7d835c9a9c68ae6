// Probe behind bench/RESULTS.md (not a benchmark suite), issue 22 run 3: writes pgbench scripts
// for the claim statement before migration 0005 and after it, on a throwaway schema `pb`:
//   git show f349c7d:packages/stores/src/postgres/sql/claim.sql > /tmp/claim-old.sql
//   DATABASE_URL=postgres://postgres@127.0.0.1:5461/test npx tsx --conditions=@toolfence/source \
//     bench/probes/pg-pgbench.ts /tmp/claim-old.sql /tmp/pgbench
//   PGOPTIONS='-c synchronous_commit=off' pgbench -h 127.0.0.1 -p 5461 -U postgres -n -M prepared \
//     -T 6 -f /tmp/pgbench/fresh-old.sql test       # and fresh-new, repeat-old, repeat-new, repeat-pk
// fresh-*: a claim of a new key each time; repeat-*: a claim of one completed record; repeat-pk:
// the primary-key SELECT of that record. Drop the schema afterwards (DROP SCHEMA pb CASCADE).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';
import { renderSql } from '../../packages/stores/src/postgres/names.js';

const [oldFile = '/tmp/claim-old.sql', outDir = '/tmp/pgbench'] = process.argv.slice(2);
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5461/test',
  max: 1,
});
await pool.query('DROP SCHEMA IF EXISTS pb CASCADE');
const store = new PostgresStore({ pool, schema: 'pb', autoCleanup: false });
await store.ensureSchema();
const internals = store as unknown as {
  runner: { sql: { claim: string } };
  names: { placeholders: Record<string, string> };
};
const columns = readFileSync(
  new URL('../../packages/stores/src/postgres/statements/fragments/record-columns.sql', import.meta.url),
  'utf8',
)
  .replace(/^(--.*\n)+/, '')
  .trimEnd();
const oldSql = renderSql(
  readFileSync(oldFile, 'utf8').replace(/^-- @include record-columns$/m, columns),
  internals.names.placeholders,
);
const fingerprint = 'f'.repeat(64);
const values: Record<string, string> = {
  '1': "'bench'",
  '2': "'k' || :r",
  '3': "'tool'",
  '4': `'${fingerprint}'`,
  '5': "'own' || :r",
  '6': '30000::float8',
  '7': '86400000::float8',
  '8': "'at-least-once'",
  '9': '3',
  '10': 'false',
  '11': 'NULL::text',
  '12': 'NULL::text',
  '13': 'NULL::text',
};
/** The statement on one line, comments dropped, each $n replaced by a literal or a pgbench variable. */
const script = (sql: string, key: string) =>
  `\\set r random(1, 1000000000)\n${sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/\$(\d+)(::\w+)?/g, (match, n: string, cast: string | undefined) =>
      n === '7' && cast === '::bigint' ? '86400000::bigint' : (values[n] ?? match),
    )
    .replaceAll("'k' || :r", key)}\n`;
mkdirSync(outDir, { recursive: true });
for (const [name, sql] of [
  ['old', oldSql],
  ['new', internals.runner.sql.claim],
] as const) {
  writeFileSync(`${outDir}/fresh-${name}.sql`, script(sql, "'k' || :r"));
  writeFileSync(`${outDir}/repeat-${name}.sql`, script(sql, "'krep'"));
}
writeFileSync(
  `${outDir}/repeat-pk.sql`,
  `SELECT outcome FROM ${store.tableName} WHERE tenant = 'bench' AND key = 'krep';\n`,
);
const owner = 'holder';
const claimed = await store.claim(
  { tenant: 'bench', key: 'krep' },
  {
    tool: 'tool',
    fingerprint,
    owner,
    leaseMs: 30000,
    retentionMs: 86400000,
    mode: 'at-least-once',
    maxAttempts: 3,
    checkFingerprint: false,
  },
);
await store.complete(
  { tenant: 'bench', key: 'krep' },
  { fence: (claimed as { fence: number }).fence, owner },
  JSON.stringify({ ok: true, detail: 'x'.repeat(80) }),
  86400000,
);
console.log(`wrote ${outDir}/{fresh,repeat}-{old,new}.sql and repeat-pk.sql`);
await store.close();
await pool.end();
