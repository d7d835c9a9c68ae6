// Probe behind bench/RESULTS.md (not a benchmark suite), issue 22 run 3:
//   npx tsx --conditions=@toolfence/source bench/probes/sqlite-cpu.ts [normal|full]
// Process CPU per first call (claim + complete called directly) against two bare autocommit
// inserts on the same file, 7 interleaved rounds of 2,000. normal (the default) keeps the fsyncs out.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLiteStore } from '../../packages/stores/src/sqlite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'pgperf-sq-'));
const sync = (process.argv[2] ?? 'normal') as 'full' | 'normal';
const store = new SQLiteStore({ path: join(dir, 's.db'), synchronous: sync });
await store.ensureSchema();
const db = new Database(join(dir, 's.db'));
db.pragma('journal_mode = WAL');
db.pragma(`synchronous = ${sync}`);
db.exec('CREATE TABLE bare (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)');
const ins = db.prepare('INSERT INTO bare VALUES (?, ?) ON CONFLICT DO NOTHING');
const outcome = JSON.stringify({ ok: true, detail: 'x'.repeat(80) });
const opts = (owner: string) => ({
  tool: 't',
  fingerprint: 'f'.repeat(64),
  owner,
  leaseMs: 30000,
  retentionMs: 86400000,
  mode: 'at-least-once' as const,
  maxAttempts: 3,
  checkFingerprint: false,
});
const N = 2000;
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const res: Record<string, number[]> = { store: [], claimOnly: [], bare: [] };
for (let round = 0; round < 7; round++) {
  let t = cpu();
  for (let i = 0; i < N; i++) {
    const ref = { tenant: 'b', key: randomBytes(16).toString('hex') };
    const o = randomUUID();
    await store.claim(ref, opts(o));
    await store.complete(ref, { fence: 1, owner: o }, outcome, 86400000);
  }
  res.store!.push((cpu() - t) / N);
  t = cpu();
  for (let i = 0; i < N; i++) {
    const ref = { tenant: 'b', key: randomBytes(16).toString('hex') };
    await store.claim(ref, opts(randomUUID()));
  }
  res.claimOnly!.push((cpu() - t) / N);
  t = cpu();
  for (let i = 0; i < N; i++) {
    const k = randomBytes(16).toString('hex');
    ins.run(k + 'a', outcome);
    ins.run(k + 'b', outcome);
    await Promise.resolve();
  }
  res.bare!.push((cpu() - t) / N);
}
const med = (x: number[]) => [...x].sort((a, b) => a - b)[3]!.toFixed(1);
console.log(
  `synchronous=${sync}: store claim+complete ${med(res.store!)} µs CPU, store claim alone ${med(res.claimOnly!)} µs, 2 bare inserts ${med(res.bare!)} µs CPU`,
);
