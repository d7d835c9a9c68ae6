// SQLiteStore's approvals across SEPARATE PROCESSES on one file: four child processes, each with
// its own connection, claim the same approved calls at once (exactly one consumes each approval),
// and a file of the previous schema (migrations 0001-0004, rows in every state) is upgraded by
// migrations 0005 (the sweep bound) and 0006 with its rows intact.
import { randomBytes } from 'node:crypto';
import type { RecordRef } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { type SqliteWorker, spawnSqliteWorker, sqliteDirectory } from '../../../test/support/sqlite.js';
import { render, sqlitePlaceholders } from '../src/sqlite/names.js';
import { migrations } from '../src/sqlite/statements.js';

const DAY_MS = 86_400_000;
const directory = sqliteDirectory('approval-processes');
const path = directory.file('shared.db');
let store: SQLiteStore;
let workers: SqliteWorker[];
const asking = () => claimOptions({ approval: 'required', mode: 'at-most-once', maxAttempts: 1 });
const approve = (ref: RecordRef) =>
  store.decideApproval(
    ref,
    { approved: true, tool: 'refund', fingerprint: 'f'.repeat(64), by: 'ops' },
    DAY_MS,
  );

beforeAll(async () => {
  store = new SQLiteStore({ path });
  await store.ensureSchema();
  workers = await Promise.all(Array.from({ length: 4 }, () => spawnSqliteWorker({ path })));
  expect(new Set(workers.map((worker) => worker.pid)).size).toBe(4);
}, 60_000);

afterAll(async () => {
  await Promise.all((workers ?? []).map((worker) => worker.stop()));
  await store?.close();
  directory.remove();
});

describe('SQLiteStore approvals across processes', () => {
  it('4 processes claim the same 20 approved calls at once, 10 rounds: each approval used once', async () => {
    for (let round = 0; round < 10; round++) {
      const keys = Array.from({ length: 20 }, () => randomRef());
      for (const key of keys) {
        expect((await store.claim(key, asking())).status).toBe('approval_required');
        expect((await approve(key)).status).toBe('decided');
      }
      // Each process claims every key, in its own order (reversed in every other one), all at once.
      const perWorker = await Promise.all(
        workers.map((worker, index) => {
          const order = index % 2 === 0 ? keys : [...keys].reverse();
          return worker
            .run(order.map((key) => ({ method: 'claim', args: [key, asking()] })))
            .then((results) => (index % 2 === 0 ? results : [...results].reverse()));
        }),
      );
      for (let index = 0; index < keys.length; index++) {
        const statuses = perWorker.map(
          (results) => (results[index]?.value as { status: string } | undefined)?.status,
        );
        expect(
          statuses.filter((status) => status === 'acquired'),
          `round ${round} key ${index}`,
        ).toHaveLength(1);
        expect(
          statuses.filter((status) => status === 'busy'),
          `round ${round} key ${index}`,
        ).toHaveLength(3);
        expect(await store.get(keys[index] as RecordRef)).toMatchObject({
          state: 'in_progress',
          fence: 1,
          attempt: 1,
          approval: { approved: true, by: 'ops' },
        });
      }
    }
  }, 120_000);

  it('a file of schema 0004 is rebuilt by 0006 with every row, and then keeps approvals', async () => {
    const old = directory.file(`old-${randomBytes(3).toString('hex')}.db`);
    const placeholders = sqlitePlaceholders('toolfence_records');
    const raw = new Database(old);
    try {
      raw.exec(
        `CREATE TABLE ${placeholders.migrations_table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)`,
      );
      for (const migration of migrations.filter((each) => each.version <= 4)) {
        raw.exec(render(migration.text, placeholders));
        raw
          .prepare(`INSERT INTO ${placeholders.migrations_table} VALUES (?, ?, ?)`)
          .run(migration.version, migration.name, 1);
      }
      const insert = raw.prepare(
        `INSERT INTO ${placeholders.table} (tenant, "key", tool, fingerprint, state, fence, attempt, owner, lease_expires_at_ms, expires_at_ms, retention_ms, outcome, error_type, error_message, run_id, description, claimed_at_ms, updated_at_ms, codec) VALUES ('old', ?, 'refund', 'fp', ?, ?, ?, 'w', ?, ?, ?, ?, ?, ?, 'run', 'desc', 5, 6, 'json')`,
      );
      insert.run('done', 'completed', 2, 2, 10, 9_000_000_000_000, DAY_MS, '"ok"', null, null);
      insert.run('lost', 'indeterminate', 1, 1, 10, 9_000_000_000_000, DAY_MS, null, 'LeaseExpired', 'gone');
      insert.run('held', 'in_progress', 3, 3, 9_000_000_000_000, 9_000_000_000_001, 1, null, null, null);
      // The previous schema refuses a record before its claim: the CHECK that 0006 rebuilds.
      expect(() =>
        insert.run('early', 'approved', 0, 0, 0, 9_000_000_000_000, DAY_MS, null, null, null),
      ).toThrow(/CHECK constraint failed/);
    } finally {
      raw.close();
    }
    const upgraded = new SQLiteStore({ path: old });
    try {
      expect(await upgraded.ensureSchema()).toEqual({ applied: [5, 6] });
      expect(await upgraded.get({ tenant: 'old', key: 'done' })).toMatchObject({
        state: 'completed',
        fence: 2,
        outcome: '"ok"',
        runId: 'run',
        description: 'desc',
        claimedAtMs: 5,
        updatedAtMs: 6,
        codec: 'json',
      });
      expect(await upgraded.get({ tenant: 'old', key: 'lost' })).toMatchObject({
        state: 'indeterminate',
        error: { type: 'LeaseExpired', message: 'gone' },
      });
      expect(await upgraded.get({ tenant: 'old', key: 'held' })).toMatchObject({
        state: 'in_progress',
        fence: 3,
      });
      const page = await upgraded.list({ tenant: 'old', limit: 10 });
      expect(page.records.map((record) => record.key)).toEqual(['lost']);
      const ref = { tenant: 'old', key: 'new' };
      expect((await upgraded.claim(ref, asking())).status).toBe('approval_required');
      const check = new Database(old, { readonly: true });
      try {
        const indexes = check
          .prepare(
            `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'toolfence_records' ORDER BY name`,
          )
          .all()
          .map((row) => (row as { name: string }).name);
        expect(indexes).toEqual(['sqlite_autoindex_toolfence_records_1', 'toolfence_records_sweep_at_ms']);
      } finally {
        check.close();
      }
      // A claimed record keeps an attempt: the rebuilt table refuses fence 0 outside the approval states.
      const writer = new Database(old);
      try {
        expect(() =>
          writer
            .prepare(
              `INSERT INTO ${placeholders.table} (tenant, "key", tool, fingerprint, state, fence, attempt, owner, lease_expires_at_ms, expires_at_ms, retention_ms) VALUES ('old', 'bad', 'refund', 'fp', 'in_progress', 0, 0, 'w', 0, 9000000000000, 1)`,
            )
            .run(),
        ).toThrow(/CHECK constraint failed/);
      } finally {
        writer.close();
      }
    } finally {
      await upgraded.close();
    }
  });
});
