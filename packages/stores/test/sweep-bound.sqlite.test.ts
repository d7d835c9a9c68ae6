// SQLiteStore, migration 0005: the sweep finds records by sweep_at_ms, an upper bound of
// expires_at_ms kept by every write; a complete inside its lease leaves it (and its index)
// alone; no listing index remains; a file of the previous version is migrated and its rows, and
// rows a previous version inserts without the bound, are swept only once expired.
import { SQLiteStore, type SQLiteStoreOptions } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';
import { render, sqlitePlaceholders } from '../src/sqlite/names.js';
import { migrations } from '../src/sqlite/statements.js';

const directory = sqliteDirectory('sweepbound');
const stores: SQLiteStore[] = [];
let fileCounter = 0;

afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  directory.remove();
});

function manualClock(startMs: number) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => (nowMs += ms) };
}

function open(options: Partial<SQLiteStoreOptions> = {}): SQLiteStore {
  const store = new SQLiteStore({ path: directory.file(`db-${++fileCounter}.db`), ...options });
  stores.push(store);
  return store;
}

function query<T>(path: string, sql: string, ...values: unknown[]): T[] {
  const raw = new Database(path, { readonly: true });
  try {
    return raw.prepare(sql).all(...values) as T[];
  } finally {
    raw.close();
  }
}

const bounds = (path: string, key: string) =>
  query<{ expires: number; sweep: number | null }>(
    path,
    'SELECT expires_at_ms AS expires, sweep_at_ms AS sweep FROM toolfence_records WHERE "key" = ?',
    key,
  )[0]!;

describe('SQLiteStore sweep bound (migration 0005)', () => {
  it('indexes the records only by primary key and sweep_at_ms', async () => {
    const store = open();
    await store.ensureSchema();
    const names = query<{ name: string }>(
      store.path,
      "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'toolfence_records' ORDER BY name",
    ).map((row) => row.name);
    expect(names).toEqual(['sqlite_autoindex_toolfence_records_1', 'toolfence_records_sweep_at_ms']);
  });

  it('a complete inside its lease keeps the bound; renew and a late complete raise it', async () => {
    const clock = manualClock(1_000_000);
    const store = open({ clock });
    await store.ensureSchema();
    const ref = randomRef();
    const options = claimOptions({ leaseMs: 60_000, retentionMs: 1_000 });
    await store.claim(ref, options);
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_061_000, sweep: 1_061_000 });
    clock.advance(10);
    await store.renew(ref, { fence: 1, owner: options.owner }, 120_000);
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_121_010, sweep: 1_121_010 });
    clock.advance(10);
    await store.complete(ref, { fence: 1, owner: options.owner }, '"done"', 1_000);
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_001_020, sweep: 1_121_010 });

    const late = randomRef();
    const short = claimOptions({ leaseMs: 100, retentionMs: 10_000 });
    await store.claim(late, short);
    expect(bounds(store.path, late.key)).toEqual({ expires: 1_010_120, sweep: 1_010_120 });
    clock.advance(500);
    expect(await store.complete(late, { fence: 1, owner: short.owner }, '"done"', 600_000)).toMatchObject({
      status: 'completed',
    });
    expect(bounds(store.path, late.key)).toEqual({ expires: 1_600_520, sweep: 1_600_520 });
  });

  it('approval writes keep the bound: a request, a decision and the claim that consumes it', async () => {
    const clock = manualClock(1_000_000);
    const store = open({ clock });
    await store.ensureSchema();
    const ref = randomRef();
    const asking = claimOptions({
      approval: 'required',
      mode: 'at-most-once',
      maxAttempts: 1,
      retentionMs: 1_000,
    });
    expect((await store.claim(ref, asking)).status).toBe('approval_required');
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_001_000, sweep: 1_001_000 });
    clock.advance(10);
    const decision = { approved: true, tool: asking.tool, fingerprint: asking.fingerprint, by: 'ops' };
    expect((await store.decideApproval(ref, decision, 5_000)).status).toBe('decided');
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_005_010, sweep: 1_005_010 });
    clock.advance(10);
    const consuming = { ...asking, leaseMs: 60_000 };
    expect((await store.claim(ref, consuming)).status).toBe('acquired');
    expect(bounds(store.path, ref.key)).toEqual({ expires: 1_061_020, sweep: 1_061_020 });
    // A decision made before any call asked writes its own deadline as the bound.
    const early = randomRef();
    expect((await store.decideApproval(early, decision, 2_000)).status).toBe('decided');
    expect(bounds(store.path, early.key)).toEqual({ expires: 1_002_020, sweep: 1_002_020 });
    // Past its retention the decision is kept until the sweep bound passes, then swept.
    clock.advance(2_000);
    expect(await store.get(early)).toBeNull();
    expect(await store.cleanup()).toBe(1);
  });

  it('cleanup deletes a record once past both deadlines, never a live one', async () => {
    const clock = manualClock(1_000_000);
    const store = open({ clock });
    await store.ensureSchema();
    const ref = randomRef();
    const options = claimOptions({ leaseMs: 60_000, retentionMs: 1_000 });
    await store.claim(ref, options);
    await store.complete(ref, { fence: 1, owner: options.owner }, '"done"', 1_000);
    clock.advance(2_000);
    // Past its retention: absent to every read, kept until the sweep bound passes.
    expect(await store.get(ref)).toBeNull();
    expect(await store.cleanup()).toBe(0);
    clock.advance(60_000);
    expect(await store.cleanup()).toBe(1);
  });

  it('migrates a file of the previous version; rows without a bound are swept once expired', async () => {
    const store = open();
    const placeholders = sqlitePlaceholders('toolfence_records');
    const raw = new Database(store.path);
    const insert = (key: string, expiresAtMs: number) =>
      raw
        .prepare(
          `INSERT INTO ${placeholders.table} (tenant, "key", tool, fingerprint, state, fence, attempt, owner,
             lease_expires_at_ms, expires_at_ms, retention_ms, outcome, updated_at_ms)
           VALUES ('old', ?, 'refund', 'f', 'completed', 1, 1, 'o', 1, ?, 1, '"done"', 1)`,
        )
        .run(key, expiresAtMs);
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
      insert('expired', 2);
      insert('live', 9_000_000_000_000);
    } finally {
      raw.close();
    }
    expect(await store.ensureSchema()).toEqual({ applied: [5, 6] });
    expect(bounds(store.path, 'expired')).toEqual({ expires: 2, sweep: 2 });
    expect(bounds(store.path, 'live')).toEqual({ expires: 9_000_000_000_000, sweep: 9_000_000_000_000 });
    // Rows a process of the previous version inserts after the upgrade carry no bound.
    const writer = new Database(store.path);
    try {
      writer
        .prepare(
          `INSERT INTO ${placeholders.table} (tenant, "key", tool, fingerprint, state, fence, attempt, owner,
             lease_expires_at_ms, expires_at_ms, retention_ms, outcome, updated_at_ms)
           VALUES ('old', ?, 'refund', 'f', 'completed', 1, 1, 'o', 1, ?, 1, '"done"', 1)`,
        )
        .run('unbounded-expired', 3);
      writer
        .prepare(
          `INSERT INTO ${placeholders.table} (tenant, "key", tool, fingerprint, state, fence, attempt, owner,
             lease_expires_at_ms, expires_at_ms, retention_ms, outcome, updated_at_ms)
           VALUES ('old', ?, 'refund', 'f', 'completed', 1, 1, 'o', 1, ?, 1, '"done"', 1)`,
        )
        .run('unbounded-live', 9_000_000_000_000);
    } finally {
      writer.close();
    }
    expect(await store.cleanup()).toBe(2);
    expect(
      query<{ key: string }>(store.path, 'SELECT "key" AS key FROM toolfence_records ORDER BY "key"').map(
        (row) => row.key,
      ),
    ).toEqual(['live', 'unbounded-live']);
    expect(await store.get({ tenant: 'old', key: 'unbounded-live' })).toMatchObject({ state: 'completed' });
  });
});
