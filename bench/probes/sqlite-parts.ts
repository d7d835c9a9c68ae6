// Probe behind bench/RESULTS.md (not a benchmark suite): npx tsx --conditions=@toolfence/source bench/probes/sqlite-parts.ts
// SQLite first call, parts: 2 autocommit inserts (bare), store.claim + store.complete direct,
// guard.run; wall ms p50 at concurrency 1 over interleaved rounds, synchronous FULL.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Guard, Idempotency, jsonOutcomeCodec } from '../../packages/core/src/index.js';
import { SQLiteStore } from '../../packages/stores/src/sqlite/index.js';

const dir = mkdtempSync(join(tmpdir(), 'tf-sq-'));
const path = join(dir, 'r.db');
const store = new SQLiteStore({ path });
await store.ensureSchema();
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE bare (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)');
const ins = db.prepare('INSERT INTO bare VALUES (?, ?) ON CONFLICT DO NOTHING');
const outcome = jsonOutcomeCodec.encode({ ok: true, confirmation: 'C-1', detail: 'x'.repeat(58) });
const guard = new Guard({ store });
let n = 0;
const opts = (k: string, owner: string) => ({
  tool: 't',
  fingerprint: k,
  owner,
  leaseMs: 30000,
  retentionMs: 86400000,
  mode: 'at-least-once' as const,
  maxAttempts: 3,
  checkFingerprint: false,
});
const work: [string, () => Promise<unknown>][] = [
  [
    '2 autocommit inserts',
    async () => {
      const k = `k${n++}`;
      ins.run(`${k}a`, outcome);
      ins.run(`${k}b`, outcome);
    },
  ],
  [
    'store.claim + store.complete',
    async () => {
      const k = (n++).toString(16).padStart(64, '0');
      const o = randomUUID();
      const c = await store.claim({ tenant: 'd', key: k }, opts(k, o));
      await store.complete(
        { tenant: 'd', key: k },
        { fence: (c as { fence: number }).fence, owner: o },
        outcome,
        86400000,
      );
    },
  ],
  [
    'guard.run first call',
    () =>
      guard.run(
        { tool: 't', runId: 'r', arguments: { id: n++ }, policy: { kind: Idempotency.IDEMPOTENT } },
        () => ({ ok: true }),
      ),
  ],
];
const s: Record<string, number[]> = {};
for (let r = 0; r < 7; r++)
  for (let o = 0; o < work.length; o++) {
    const [name, op] = work[(r + o) % work.length]!;
    const lat: number[] = [];
    for (let i = 0; i < 150; i++) {
      const t = performance.now();
      await op();
      lat.push(performance.now() - t);
    }
    lat.sort((a, b) => a - b);
    s[name] ??= [];
    s[name].push(lat[75]!);
  }
for (const [name, v] of Object.entries(s)) {
  v.sort((a, b) => a - b);
  console.log(name.padEnd(32), v[3]!.toFixed(3), 'ms p50');
}
await store.close();
db.close();
rmSync(dir, { recursive: true, force: true });
