// Probe behind bench/RESULTS.md (not a benchmark suite): fsyncs and page writes of 200 first calls,
//   strace -f -c -e trace=fsync,pwrite64 npx tsx --conditions=@toolfence/source bench/probes/sqlite-sync.ts store|bare
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SQLiteStore } from '../../packages/stores/src/sqlite/index.js';

const mode = process.argv[2];
const dir = mkdtempSync(join(tmpdir(), 'tf-sqs-'));
const path = join(dir, 'r.db');
const store = new SQLiteStore({ path });
await store.ensureSchema();
const db = new Database(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec('CREATE TABLE bare (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)');
const ins = db.prepare('INSERT INTO bare VALUES (?, ?) ON CONFLICT DO NOTHING');
process.stdout.write('START\n');
for (let i = 0; i < 200; i++) {
  if (mode === 'bare') {
    ins.run(`k${i}a`, 'x');
    ins.run(`k${i}b`, 'x');
    continue;
  }
  const k = i.toString(16).padStart(64, '0');
  const o = randomUUID();
  const c = await store.claim(
    { tenant: 'd', key: k },
    {
      tool: 't',
      fingerprint: k,
      owner: o,
      leaseMs: 30000,
      retentionMs: 86400000,
      mode: 'at-least-once',
      maxAttempts: 3,
      checkFingerprint: false,
    },
  );
  await store.complete(
    { tenant: 'd', key: k },
    { fence: (c as { fence: number }).fence, owner: o },
    'x',
    86400000,
  );
}
await store.close();
db.close();
