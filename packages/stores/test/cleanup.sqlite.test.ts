// SQLiteStore: the resolution journal is cleaned up too. cleanup() deletes expired resolution
// entries after expired records, within one limit; each resolve sweeps a few expired entries; and
// a file of the previous version (migrations 0001–0002) gets the journal's expiry index (0003).
import { randomBytes } from 'node:crypto';
import { SQLiteStore, type SQLiteStoreOptions } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';
import { render, sqlitePlaceholders } from '../src/sqlite/names.js';
import { migrations } from '../src/sqlite/statements.js';

const directory = sqliteDirectory('cleanup');
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

async function ready(options: Partial<SQLiteStoreOptions> = {}): Promise<SQLiteStore> {
  const store = new SQLiteStore({ path: directory.file(`db-${++fileCounter}.db`), ...options });
  stores.push(store);
  await store.ensureSchema();
  return store;
}

function countRows(path: string, sql: string, ...values: unknown[]): number {
  const raw = new Database(path, { readonly: true });
  try {
    return (raw.prepare(sql).get(...values) as { n: number }).n;
  } finally {
    raw.close();
  }
}

/** Records of `tenant` left indeterminate: claimed at-most-once, lease lapsed, claimed again. */
async function indeterminate(
  store: SQLiteStore,
  clock: { advance(ms: number): number },
  tenant: string,
  n: number,
) {
  const targets = Array.from({ length: n }, () => randomRef(tenant));
  for (const target of targets)
    await store.claim(target, claimOptions({ mode: 'at-most-once', leaseMs: 10 }));
  clock.advance(20);
  for (const target of targets) {
    expect(await store.claim(target, claimOptions({ mode: 'at-most-once' }))).toMatchObject({
      status: 'indeterminate',
    });
  }
  return targets;
}

describe('SQLiteStore cleanup of the resolution journal', () => {
  it('cleanup() deletes expired entries after expired records, at most `limit` rows together', async () => {
    const clock = manualClock(1_000_000);
    const store = await ready({ clock });
    const tenant = `j-${randomBytes(3).toString('hex')}`;
    const released = await indeterminate(store, clock, tenant, 7);
    for (const target of released) {
      expect(await store.resolve(target, { released: true, by: 'ops' }, 100)).toEqual({ status: 'resolved' });
    }
    const [kept] = await indeterminate(store, clock, tenant, 1);
    await store.resolve(kept!, { outcome: '"fixed"', by: 'ops' }, 86_400_000);
    // Three completed records whose retention lapses with the entries.
    for (let index = 0; index < 3; index++) {
      const target = randomRef(tenant);
      const options = claimOptions({ leaseMs: 10, retentionMs: 50 });
      await store.claim(target, options);
      await store.complete(target, { fence: 1, owner: options.owner }, '"old"', 50);
    }
    clock.advance(1_000);
    const entries = () =>
      countRows(
        store.path,
        'SELECT count(*) AS n FROM toolfence_records_resolutions WHERE tenant = ?',
        tenant,
      );
    const records = () =>
      countRows(store.path, 'SELECT count(*) AS n FROM toolfence_records WHERE tenant = ?', tenant);
    expect(entries()).toBe(8);
    expect(records()).toBe(4);
    expect(await store.resolutions(released[0]!)).toEqual([]);

    expect(await store.cleanup({ limit: 5 })).toBe(5);
    expect(records()).toBe(1); // the three expired records first
    expect(entries()).toBe(6);
    expect(await store.cleanup({ limit: 5 })).toBe(5);
    expect(await store.cleanup({ limit: 5 })).toBe(0);
    expect(entries()).toBe(1);
    expect(await store.resolutions(kept!)).toMatchObject([{ action: 'completed', by: 'ops' }]);
    expect((await store.get(kept!))?.outcome).toBe('"fixed"');
  });

  it('each resolve deletes a few expired entries, so the journal does not grow without cleanup()', async () => {
    const clock = manualClock(2_000_000);
    const store = await ready({ clock });
    const tenant = `s-${randomBytes(3).toString('hex')}`;
    for (let round = 0; round < 5; round++) {
      for (const target of await indeterminate(store, clock, tenant, 3)) {
        await store.resolve(target, { released: true }, 10);
      }
      clock.advance(100); // this round's entries expire
    }
    const entries = countRows(
      store.path,
      'SELECT count(*) AS n FROM toolfence_records_resolutions WHERE tenant = ?',
      tenant,
    );
    // 15 entries written, each resolve swept up to 4 expired ones: only the last round's 3 remain.
    expect(entries).toBe(3);
  });

  it('a file of the previous version gets migration 0003 and its old entries are cleaned up', async () => {
    const path = directory.file(`old-${randomBytes(3).toString('hex')}.db`);
    const placeholders = sqlitePlaceholders('toolfence_records');
    const raw = new Database(path);
    try {
      raw.exec(
        `CREATE TABLE ${placeholders.migrations_table} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)`,
      );
      for (const migration of migrations.filter((each) => each.version <= 2)) {
        raw.exec(render(migration.text, placeholders));
        raw
          .prepare(`INSERT INTO ${placeholders.migrations_table} VALUES (?, ?, ?)`)
          .run(migration.version, migration.name, 1);
      }
      const entry = raw.prepare(
        `INSERT INTO ${placeholders.resolutions_table} (tenant, "key", tool, action, from_state, fence, attempt, resolved_at_ms, expires_at_ms) VALUES ('old', ?, 'refund', 'released', 'abandoned', 1, 1, 1, ?)`,
      );
      entry.run('expired', 2);
      entry.run('live', 9_000_000_000_000);
    } finally {
      raw.close();
    }
    const store = new SQLiteStore({ path });
    stores.push(store);
    expect(await store.ensureSchema()).toEqual({ applied: [3, 4, 5, 6] });
    expect(await store.cleanup()).toBe(1);
    expect(await store.resolutions({ tenant: 'old', key: 'live' })).toHaveLength(1);
    expect(
      countRows(
        path,
        `SELECT count(*) AS n FROM sqlite_master WHERE name = 'toolfence_records_resolutions_expires'`,
      ),
    ).toBe(1);
  });
});
