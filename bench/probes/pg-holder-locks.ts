// Probe behind bench/RESULTS.md ("The PostgreSQL test flake"), not a benchmark suite: what a
// refused holder's renew / complete / release / markIndeterminate costs the server.
//   DATABASE_URL=postgres://postgres@127.0.0.1:5471/test npx tsx --conditions=@toolfence/source \
//     bench/probes/pg-holder-locks.ts
// 1. WAL: pg_current_wal_lsn() before and after 200 calls of each by a stale holder (the
//    record's fence, another owner), and of the current holder's renew for comparison. Run it on
//    a server nobody else writes to: the diff counts every writer.
// 2. Lock waits: a writer holds the row (UPDATE in an open transaction) while 40 stale renews
//    run at once; after 500 ms a third session counts the waiting locks (pg_locks NOT granted)
//    and the backends waiting on a Lock (pg_stat_activity); then the writer commits.
// Schema `phl`, dropped at the end.
import { randomUUID } from 'node:crypto';
import type { Holder, RecordRef } from '@toolfence/core';
import pg from 'pg';
import { PostgresStore } from '../../packages/stores/src/postgres/index.js';

const url = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5471/test';
const pool = new pg.Pool({ connectionString: url, max: 45 });
const observer = new pg.Client({ connectionString: url });
await observer.connect();
await pool.query('DROP SCHEMA IF EXISTS phl CASCADE');
const store = new PostgresStore({ pool, schema: 'phl', autoCleanup: false });
await store.ensureSchema();
const ref: RecordRef = { tenant: 'probe', key: 'k' };
const owner = randomUUID();
const claimed = await store.claim(ref, {
  tool: 'refund',
  fingerprint: 'f'.repeat(64),
  owner,
  leaseMs: 600_000,
  retentionMs: 86_400_000,
  mode: 'at-least-once',
  maxAttempts: 3,
  checkFingerprint: false,
});
if (claimed.status !== 'acquired') throw new Error(`claim: ${claimed.status}`);
const holder: Holder = { fence: claimed.fence, owner };
const stale: Holder = { fence: holder.fence, owner: randomUUID() };

async function walBytes(calls: number, call: () => Promise<unknown>): Promise<number> {
  await call();
  const before = await observer.query('SELECT pg_current_wal_lsn() AS lsn');
  for (let i = 0; i < calls; i += 1) await call();
  const after = await observer.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [
    before.rows[0].lsn,
  ]);
  return Number(after.rows[0].bytes) / calls;
}

const calls = 200;
const error = { type: 'Probe', message: 'probe' };
const wal = {
  'stale renew': await walBytes(calls, () => store.renew(ref, stale, 600_000)),
  'stale complete': await walBytes(calls, () => store.complete(ref, stale, '{}', 86_400_000)),
  'stale release': await walBytes(calls, () => store.release(ref, stale)),
  'stale markIndeterminate': await walBytes(calls, () =>
    store.markIndeterminate(ref, stale, error, 86_400_000),
  ),
  'current renew': await walBytes(calls, () => store.renew(ref, holder, 600_000)),
};
for (const [name, bytes] of Object.entries(wal))
  console.log(`WAL bytes per call, ${name}: ${bytes.toFixed(1)}`);

const writer = new pg.Client({ connectionString: url });
await writer.connect();
await writer.query('BEGIN');
await writer.query(
  `UPDATE ${store.tableName} SET lease_expires_at = lease_expires_at WHERE tenant = $1 AND key = $2`,
  [ref.tenant, ref.key],
);
const startedMs = Date.now();
let answeredBeforeCommit = 0;
let committed = false;
const renews = Array.from({ length: 40 }, () =>
  store.renew(ref, stale, 600_000).then((result) => {
    if (!committed) answeredBeforeCommit += 1;
    return result;
  }),
);
await new Promise((resolve) => setTimeout(resolve, 500));
const locks = await observer.query(
  `SELECT count(*) FILTER (WHERE NOT granted) AS waiting,
          count(*) FILTER (WHERE granted AND locktype IN ('tuple', 'transactionid')) AS held
   FROM pg_locks WHERE pid <> pg_backend_pid() AND pid <> $1`,
  [(writer as unknown as { processID: number }).processID],
);
const waits = await observer.query(
  `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
);
committed = true;
await writer.query('COMMIT');
const results = await Promise.all(renews);
const answers = new Map<string, number>();
for (const result of results) {
  const answer = result.status === 'lost' ? `lost/${result.reason}` : result.status;
  answers.set(answer, (answers.get(answer) ?? 0) + 1);
}
console.log(
  `40 stale renews while a writer holds the row for ${Date.now() - startedMs} ms: answered before its commit ${answeredBeforeCommit}; ` +
    `at 500 ms, locks not granted ${locks.rows[0].waiting}, tuple/transactionid locks held by them ${locks.rows[0].held}, ` +
    `backends waiting on a Lock ${waits.rows[0].n}; answers ${JSON.stringify(Object.fromEntries(answers))}`,
);
await writer.end();
await store.close();
await pool.query('DROP SCHEMA phl CASCADE');
await pool.end();
await observer.end();
