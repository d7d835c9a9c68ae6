import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Guard, jsonOutcomeCodec } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { type Row, row } from '../lib/report.js';
import { interleave, RoundFigures, runBatch } from '../lib/stats.js';
import { guardedCalls } from '../lib/store-latency.js';
import { outcome100, scaled } from '../lib/workloads.js';

/**
 * The floor of a SQLite first call on the same file: two single-row autocommit
 * `INSERT ... ON CONFLICT DO NOTHING` (the claim and the completion, each its own commit) on a
 * bare `(key text primary key, outcome text)` table, through a second better-sqlite3 connection
 * in WAL mode with the store's `synchronous` setting; a repeat's floor is one primary-key SELECT.
 */
function sqliteBaselines(path: string, synchronous: 'full' | 'normal') {
  const db = new Database(path, { timeout: 5000 });
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('CREATE TABLE IF NOT EXISTS bare_records (key TEXT PRIMARY KEY, outcome TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO bare_records (key, outcome) VALUES (?, ?) ON CONFLICT DO NOTHING');
  const select = db.prepare('SELECT outcome FROM bare_records WHERE key = ?');
  const outcome = jsonOutcomeCodec.encode(outcome100(0));
  const repeatPool = 1_000;
  db.transaction(() => {
    for (let id = 0; id < repeatPool; id++) insert.run(`repeat-${id}`, outcome);
  })();
  let nextKey = 0;
  return {
    // Async like a store call, so both sides go through the same promise machinery.
    twoInserts: async () => {
      const key = `first-${nextKey++}`;
      insert.run(`${key}:claim`, outcome);
      insert.run(`${key}:complete`, outcome);
    },
    primaryKeySelect: async (index: number) => {
      if (select.get(`repeat-${index % repeatPool}`) === undefined)
        throw new Error('sqlite baseline: no row');
    },
    close: () => db.close(),
  };
}

/** The first-call floor alone (two autocommit inserts on the same file), for the curves. */
export function sqliteFirstCallBaseline(
  path: string,
  synchronous: 'full' | 'normal',
): { run: () => Promise<void>; close: () => void } {
  const baselines = sqliteBaselines(path, synchronous);
  return { run: baselines.twoInserts, close: () => baselines.close() };
}

/** A SQLiteStore on a fresh file in the temp directory, and how to remove it. */
export function temporarySqliteStore(synchronous: 'full' | 'normal' = 'full') {
  const directory = mkdtempSync(join(tmpdir(), 'tf-bench-sqlite-'));
  const path = join(directory, 'records.db');
  const store = new SQLiteStore({ path, synchronous });
  return {
    store,
    path,
    async remove(): Promise<void> {
      await store.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * `guard.run` on a SQLiteStore (default `synchronous: 'full'`) against two single-row autocommit
 * inserts on the same file (first call, target <= 1.3, issue 22) and one primary-key SELECT
 * (repeat, for information). Concurrency 1: better-sqlite3 is synchronous, so concurrent calls
 * in one process queue behind each other on the event loop anyway.
 */
export async function sqliteSuite(): Promise<Row[]> {
  const { store, path, remove } = temporarySqliteStore('full');
  await store.ensureSchema();
  const baselines = sqliteBaselines(path, 'full');
  try {
    const calls = guardedCalls(new Guard({ store }));
    await calls.prepare();
    const total = scaled(300);
    const figures = {
      first: new RoundFigures(),
      repeat: new RoundFigures(),
      inserts: new RoundFigures(),
      select: new RoundFigures(),
    };
    await runBatch(1, total, () => calls.first());
    await runBatch(1, total, () => baselines.twoInserts());
    await interleave(scaled(7), [
      { figures: figures.first, run: () => runBatch(1, total, () => calls.first()) },
      { figures: figures.inserts, run: () => runBatch(1, total, () => baselines.twoInserts()) },
      { figures: figures.repeat, run: () => runBatch(1, total, (index) => calls.repeat(index)) },
      {
        figures: figures.select,
        run: () => runBatch(1, total, (index) => baselines.primaryKeySelect(index)),
      },
    ]);
    return [
      row(
        'sqlite: first call p50, c=1 (vs 2×INSERT ON CONFLICT DO NOTHING, same file)',
        'ms',
        figures.first.p50,
        figures.inserts.p50,
        '<= 1.3',
      ),
      row(
        'sqlite: first call p99, c=1 (vs 2×INSERT ON CONFLICT DO NOTHING, same file)',
        'ms',
        figures.first.p99,
        figures.inserts.p99,
      ),
      row('sqlite: repeat p50, c=1 (vs PK SELECT, same file)', 'ms', figures.repeat.p50, figures.select.p50),
    ];
  } finally {
    baselines.close();
    await remove();
  }
}
