// SQLiteStore behaviour that the generic conformance suite cannot see: WAL, the schema and its
// migrations, the busy timeout, byte-exact outcomes at the limits, file permissions, the clock's
// deadlines (retention from the last renewal, exact integers), cleanup, close, and in-process wake-ups.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, statSync, writeFileSync } from 'node:fs';
import type { RecordRef } from '@toolfence/core';
import { StoreConfigurationError, StoreInputError, StoreUnavailableError } from '@toolfence/core';
import { MAX_OUTCOME_LENGTH, MAX_RETENTION_MS } from '@toolfence/core/store';
import { SQLiteStore, type SQLiteStoreOptions } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { claimOptions, randomRef } from '../../../test/support/claims.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const DAY_MS = 86_400_000;
const directory = sqliteDirectory('store');
const stores: SQLiteStore[] = [];
let fileCounter = 0;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const ref = (): RecordRef => randomRef();
const newFile = () => directory.file(`db-${++fileCounter}.db`);
function newStore(options: Partial<SQLiteStoreOptions> = {}): SQLiteStore {
  const created = new SQLiteStore({ path: newFile(), ...options });
  stores.push(created);
  return created;
}
async function ready(options: Partial<SQLiteStoreOptions> = {}): Promise<SQLiteStore> {
  const created = newStore(options);
  await created.ensureSchema();
  return created;
}
/** A clock the test moves by hand. */
function manualClock(startMs: number) {
  let nowMs = startMs;
  return { now: () => nowMs, advance: (ms: number) => (nowMs += ms), set: (ms: number) => (nowMs = ms) };
}
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => new Error('resolved'),
    (error: unknown) => error,
  );

afterAll(async () => {
  await Promise.all(stores.map((created) => created.close()));
  directory.remove();
});

describe('SQLiteStore on a file', () => {
  it('puts the file in WAL mode with synchronous FULL by default (NORMAL when asked)', async () => {
    const store = await ready();
    const raw = new Database(store.path, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      raw.close();
    }
    // synchronous is per connection: read it through the store's own connection.
    const connection = (store as unknown as { db: { connection: { db: Database.Database } } }).db.connection
      .db;
    expect(connection.pragma('synchronous', { simple: true })).toBe(2);
    const normal = await ready({ synchronous: 'normal' });
    expect(
      (normal as unknown as { db: { connection: { db: Database.Database } } }).db.connection.db.pragma(
        'synchronous',
        {
          simple: true,
        },
      ),
    ).toBe(1);
  });

  it('ensureSchema is idempotent and records each migration once', async () => {
    const store = newStore({ table: 'Tool "calls"' });
    expect(await store.ensureSchema()).toEqual({ applied: [1, 2, 3, 4, 5, 6] });
    expect(await store.ensureSchema()).toEqual({ applied: [] });
    const again = new SQLiteStore({ path: store.path, table: 'Tool "calls"' });
    stores.push(again);
    expect(await again.ensureSchema()).toEqual({ applied: [] });
    const raw = new Database(store.path, { readonly: true });
    try {
      expect(raw.prepare('SELECT version, name FROM "Tool ""calls""_migrations"').all()).toEqual([
        { version: 1, name: '0001_init' },
        { version: 2, name: '0002_listing' },
        { version: 3, name: '0003_resolutions_expiry' },
        { version: 4, name: '0004_resolve_in_progress' },
        { version: 5, name: '0005_sweep_bound' },
        { version: 6, name: '0006_approvals' },
      ]);
    } finally {
      raw.close();
    }
    expect(store.tableName).toBe('"Tool ""calls"""');
    expect((await again.claim(ref(), claimOptions())).status).toBe('acquired');
  });

  it('a missing table is StoreConfigurationError naming ensureSchema(), until it is created', async () => {
    const store = newStore();
    const target = ref();
    const holder = { fence: 1, owner: 'o' };
    const calls: [string, () => Promise<unknown>][] = [
      ['claim', () => store.claim(target, claimOptions())],
      ['renew', () => store.renew(target, holder, 1000)],
      ['complete', () => store.complete(target, holder, '1', DAY_MS)],
      ['release', () => store.release(target, holder)],
      [
        'markIndeterminate',
        () => store.markIndeterminate(target, holder, { type: 'E', message: 'm' }, DAY_MS),
      ],
      ['get', () => store.get(target)],
      ['resolve', () => store.resolve(target, { released: true }, DAY_MS)],
      ['forget', () => store.forget({ tenant: target.tenant })],
      ['waitForSettle', () => store.waitForSettle(target, { timeoutMs: 100 })],
      ['cleanup', () => store.cleanup()],
    ];
    for (const [name, call] of calls) {
      const error = await rejection(call());
      expect(StoreConfigurationError.isInstance(error), `${name}: ${String(error)}`).toBe(true);
      expect(String((error as Error).message)).toContain('ensureSchema()');
    }
    await store.ensureSchema();
    expect((await store.claim(target, claimOptions())).status).toBe('acquired');
  });

  it('a file that is not a database is StoreConfigurationError; a missing directory StoreUnavailableError', async () => {
    const garbage = newFile();
    writeFileSync(garbage, 'this is not a database, just text that is long enough to look like a header');
    const store = newStore({ path: garbage });
    expect(StoreConfigurationError.isInstance(await rejection(store.get(ref())))).toBe(true);
    const missing = newStore({ path: directory.file('no/such/dir.db') });
    const error = await rejection(missing.claim(ref(), claimOptions()));
    expect(StoreUnavailableError.isInstance(error)).toBe(true);
    expect((error as StoreUnavailableError).operation).toBe('claim');
  });

  it('checks its input before any I/O: bad input on an unopenable file is StoreInputError', async () => {
    const missing = newStore({ path: directory.file('no/such/dir.db') });
    const good = ref();
    const bad: [string, () => Promise<unknown>][] = [
      ['tenant with NUL', () => missing.claim({ tenant: 'a\u0000b', key: good.key }, claimOptions())],
      ['leaseMs 0', () => missing.claim(good, claimOptions({ leaseMs: 0 }))],
      [
        'retention > 10 years',
        () => missing.claim(good, claimOptions({ retentionMs: MAX_RETENTION_MS + 1 })),
      ],
      ['maxAttempts 1001', () => missing.claim(good, claimOptions({ maxAttempts: 1001 }))],
      ['lone surrogate outcome', () => missing.complete(good, { fence: 1, owner: 'o' }, '\uD800', DAY_MS)],
      ['fence 0', () => missing.renew(good, { fence: 0, owner: 'o' }, 1000)],
      [
        'NUL in error message',
        () =>
          missing.markIndeterminate(
            good,
            { fence: 1, owner: 'o' },
            { type: 'E', message: 'a\u0000' },
            DAY_MS,
          ),
      ],
      ['bad resolution', () => missing.resolve(good, { released: false } as never, DAY_MS)],
      ['empty tenant to forget', () => missing.forget({ tenant: '' })],
      ['long key', () => missing.get({ tenant: 't', key: 'k'.repeat(257) })],
    ];
    for (const [name, call] of bad) {
      const error = await rejection(call());
      expect(StoreInputError.isInstance(error), `${name}: ${String(error)}`).toBe(true);
    }
  });

  it('a busy timeout: a write lock held by another connection makes a call wait, then StoreUnavailableError', async () => {
    const store = await ready({ busyTimeoutMs: 150 });
    const target = ref();
    const done = ref();
    const doneBy = claimOptions();
    await store.claim(done, doneBy);
    await store.complete(done, { fence: 1, owner: doneBy.owner }, '"v"', DAY_MS);
    const other = new Database(store.path);
    try {
      other.exec('BEGIN IMMEDIATE');
      // A repeat, a conflict and a busy answer are read without the write lock: answered at once.
      expect(await store.claim(done, claimOptions())).toMatchObject({
        status: 'completed',
        record: { outcome: '"v"' },
      });
      expect(await store.claim(done, claimOptions({ tool: 'other' }))).toMatchObject({ status: 'conflict' });
      const startedMs = Date.now();
      const error = await rejection(store.claim(target, claimOptions()));
      const waitedMs = Date.now() - startedMs;
      expect(StoreUnavailableError.isInstance(error), String(error)).toBe(true);
      expect(String((error as Error).message)).toContain('busyTimeoutMs (150 ms)');
      expect(waitedMs).toBeGreaterThanOrEqual(140);
      expect(waitedMs).toBeLessThan(2_000);
      // A read does not need the write lock (WAL: readers never wait for the writer).
      expect(await store.get(target)).toBeNull();
      other.exec('ROLLBACK');
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
    expect((await store.claim(target, claimOptions())).status).toBe('acquired');
  });

  it('a lock another process holds for 100 ms is waited for, at a fine grain (not whole seconds)', async () => {
    const store = await ready({ busyTimeoutMs: 3_000 });
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]);
         db.exec('BEGIN IMMEDIATE'); process.stdout.write('LOCKED\\n');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100); db.exec('COMMIT'); db.close();`,
        store.path,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<void>((resolve) => holder.on('exit', () => resolve()));
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const startedMs = performance.now();
    // The wait is asynchronous: the event loop keeps running meanwhile.
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    expect((await store.claim(ref(), claimOptions())).status).toBe('acquired');
    const waitedMs = performance.now() - startedMs;
    clearInterval(ticker);
    await exited;
    expect(ticks).toBeGreaterThan(2);
    console.log(`[sqlite] waited ${waitedMs.toFixed(1)} ms for a write lock held ~100 ms by another process`);
    expect(waitedMs).toBeGreaterThan(50);
    expect(waitedMs).toBeLessThan(500);
  });

  it('a process SIGKILLed inside a transaction: its write is gone, its lock freed, the waiting claim goes on', async () => {
    const store = await ready({ busyTimeoutMs: 10_000 });
    const target = ref();
    // The killed process claims the same key inside BEGIN IMMEDIATE and never commits.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const D = require('better-sqlite3'); const db = new D(process.argv[1]);
         db.exec('BEGIN IMMEDIATE');
         db.prepare("INSERT INTO toolfence_records (tenant, key, tool, fingerprint, state, fence, attempt, owner, lease_expires_at_ms, expires_at_ms, retention_ms) VALUES (?, ?, 'refund', 'f', 'in_progress', 1, 1, 'ghost', ?, ?, 1000)")
           .run(process.argv[2], process.argv[3], Date.now() + 60000, Date.now() + 120000);
         process.stdout.write('LOCKED\\n'); setInterval(() => {}, 1000);`,
        store.path,
        target.tenant,
        target.key,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<NodeJS.Signals | null>((resolve) =>
      holder.on('exit', (_code, signal) => resolve(signal)),
    );
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    const claiming = store.claim(target, claimOptions());
    await sleep(150);
    holder.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(await claiming).toMatchObject({ status: 'acquired', fence: 1, attempt: 1 });
    expect((await store.get(target))?.owner).not.toBe('ghost');
  });

  it('outcomes come back byte-exact: NUL, astral characters, every code unit class, the 16 Mi limit', async () => {
    const store = await ready();
    // One code point every 0x1f through all 17 planes, surrogates excluded (a lone one is refused).
    const everyPlane = Array.from({ length: 0x8d00 }, (_, index) => index * 0x1f + 1)
      .filter((point) => (point < 0xd800 || point > 0xdfff) && point <= 0x10ffff)
      .map((point) => String.fromCodePoint(point))
      .join('');
    const texts = [
      '\u0000',
      'a\u0000b\u0000\u0000c',
      `\u0000${'😀'.repeat(1000)}\u0000`,
      '\uD83D\uDE00 𝄞 𐍈 \u{10FFFF}',
      everyPlane,
      '\r\n\t\u2028\u2029\uFEFF\uFFFF',
      'x'.repeat(MAX_OUTCOME_LENGTH - 2) + '\u0000é',
    ];
    for (const text of texts) {
      const target = ref();
      const options = claimOptions();
      await store.claim(target, options);
      expect(await store.complete(target, { fence: 1, owner: options.owner }, text, DAY_MS)).toEqual({
        status: 'completed',
      });
      const replay = await store.claim(target, claimOptions());
      expect(replay.status).toBe('completed');
      if (replay.status === 'completed') expect(replay.record.outcome === text).toBe(true);
      expect((await store.get(target))?.outcome === text).toBe(true);
      // An operator's outcome too.
      const resolved = ref();
      const resolvedBy = claimOptions();
      await store.claim(resolved, resolvedBy);
      await store.markIndeterminate(
        resolved,
        { fence: 1, owner: resolvedBy.owner },
        { type: 'T', message: '😀 m' },
        DAY_MS,
      );
      expect((await store.get(resolved))?.error).toEqual({ type: 'T', message: '😀 m' });
      await store.resolve(resolved, { outcome: text }, DAY_MS);
      expect((await store.get(resolved))?.outcome === text).toBe(true);
    }
    const tooLong = ref();
    const tooLongBy = claimOptions();
    await store.claim(tooLong, tooLongBy);
    const error = await rejection(
      store.complete(
        tooLong,
        { fence: 1, owner: tooLongBy.owner },
        'x'.repeat(MAX_OUTCOME_LENGTH + 1),
        DAY_MS,
      ),
    );
    expect(StoreInputError.isInstance(error)).toBe(true);
    expect((await store.get(tooLong))?.state).toBe('in_progress');
  }, 60_000);

  it('leaves the permissions of an existing file alone (its -wal and -shm take the same mode)', async () => {
    for (const mode of [0o600, 0o640]) {
      const path = newFile();
      writeFileSync(path, '');
      chmodSync(path, mode);
      const store = new SQLiteStore({ path });
      stores.push(store);
      await store.ensureSchema();
      const target = ref();
      const options = claimOptions();
      await store.claim(target, options);
      await store.complete(target, { fence: 1, owner: options.owner }, '"x"', DAY_MS);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        expect((statSync(file).mode & 0o777).toString(8), file).toBe(mode.toString(8));
      }
    }
  });

  it('an in_progress record lives lease + retention from its last renewal; settled ones retention from settling', async () => {
    const clock = manualClock(1_700_000_000_000);
    const store = await ready({ clock });
    const target = ref();
    const options = claimOptions({ leaseMs: 1_000, retentionMs: 5_000 });
    const claimed = await store.claim(target, options);
    expect(claimed).toMatchObject({ status: 'acquired', leaseExpiresAtMs: 1_700_000_001_000 });
    expect((await store.get(target))?.expiresAtMs).toBe(1_700_000_006_000);
    clock.advance(3_000);
    expect(await store.renew(target, { fence: 1, owner: options.owner }, 1_000)).toEqual({
      status: 'renewed',
      leaseExpiresAtMs: 1_700_000_004_000,
    });
    expect((await store.get(target))?.expiresAtMs).toBe(1_700_000_009_000);
    clock.set(1_700_000_008_999);
    expect((await store.get(target))?.state).toBe('in_progress');
    clock.set(1_700_000_009_000);
    expect(await store.get(target)).toBeNull();
    // A claim over the expired row starts a new life at fence 1.
    const again = claimOptions({ leaseMs: 1_000, retentionMs: 5_000 });
    expect(await store.claim(target, again)).toMatchObject({ status: 'acquired', fence: 1, attempt: 1 });
    clock.advance(500);
    await store.complete(target, { fence: 1, owner: again.owner }, '"r"', 7_000);
    expect((await store.get(target))?.expiresAtMs).toBe(1_700_000_009_000 + 500 + 7_000);
  });

  it('writes and reads back exact integer deadlines at the largest lease and retention', async () => {
    const clock = manualClock(4_102_444_800_123); // 2100-01-01, and an odd millisecond
    const store = await ready({ clock });
    const target = ref();
    const options = claimOptions({ leaseMs: 2_147_483_647, retentionMs: MAX_RETENTION_MS });
    const claimed = await store.claim(target, options);
    const lease = 4_102_444_800_123 + 2_147_483_647;
    expect(claimed).toMatchObject({ leaseExpiresAtMs: lease });
    const record = await store.get(target);
    expect(record?.leaseExpiresAtMs).toBe(lease);
    expect(record?.expiresAtMs).toBe(lease + MAX_RETENTION_MS);
    expect(Number.isSafeInteger(record?.expiresAtMs)).toBe(true);
    const busy = await store.claim(target, claimOptions());
    expect(busy).toMatchObject({ status: 'busy', nowMs: 4_102_444_800_123 });
  });

  it('cleanup() deletes expired rows in bounded batches; claims sweep a few each', async () => {
    const clock = manualClock(1_000_000);
    const store = await ready({ clock });
    const tenant = `cleanup-${randomBytes(3).toString('hex')}`;
    for (let index = 0; index < 30; index++) {
      const target = { tenant, key: randomBytes(32).toString('hex') };
      const options = claimOptions({ leaseMs: 10, retentionMs: 10 });
      await store.claim(target, options);
      await store.complete(target, { fence: 1, owner: options.owner }, '"old"', 10);
    }
    const live = { tenant, key: randomBytes(32).toString('hex') };
    await store.claim(live, claimOptions());
    clock.advance(1_000);
    const count = () => {
      const raw = new Database(store.path, { readonly: true });
      try {
        return (
          raw.prepare('SELECT count(*) AS n FROM toolfence_records WHERE tenant = ?').get(tenant) as {
            n: number;
          }
        ).n;
      } finally {
        raw.close();
      }
    };
    expect(count()).toBeLessThanOrEqual(31);
    // The sweep inside every claim and complete deleted expired rows as they went.
    const before = count();
    expect(await store.cleanup({ limit: 10 })).toBe(10);
    expect(count()).toBe(before - 10);
    let deleted = 0;
    for (
      let batch = await store.cleanup({ limit: 10 });
      batch > 0;
      batch = await store.cleanup({ limit: 10 })
    ) {
      deleted += batch;
    }
    expect(count()).toBe(1);
    expect(before - 10 - deleted).toBe(1);
    expect((await store.get(live))?.state).toBe('in_progress');
  });

  it('forget counts live records of a tenant and wakes their waiters in this process', async () => {
    const store = await ready();
    const tenant = `forget-${randomBytes(3).toString('hex')}`;
    const targets = Array.from({ length: 3 }, () => ({ tenant, key: randomBytes(32).toString('hex') }));
    for (const target of targets) await store.claim(target, claimOptions());
    const waiting = store.waitForSettle(targets[0] as RecordRef, { timeoutMs: 10_000 });
    expect(await store.forget({ tenant })).toBe(3);
    expect(await waiting).toBe('settled');
  });

  it('wakes a waiter of another store on the same file in this process directly (before any timer or I/O)', async () => {
    const first = await ready();
    const second = new SQLiteStore({ path: first.path, watchWal: false, pollIntervalMs: 60_000 });
    stores.push(second);
    for (let index = 0; index < 20; index++) {
      const target = ref();
      const options = claimOptions();
      await first.claim(target, options);
      const waiting = second.waitForSettle(target, { timeoutMs: 10_000 });
      await sleep(5);
      await first.complete(target, { fence: 1, owner: options.owner }, '"done"', DAY_MS);
      const later = new Promise<string>((resolve) => setImmediate(() => resolve('not yet')));
      expect(await Promise.race([waiting, later])).toBe('settled');
    }
  });

  it('close(): pending waiters resolve settled, every later call is StoreUnavailableError', async () => {
    const store = await ready();
    const target = ref();
    await store.claim(target, claimOptions());
    const waiting = store.waitForSettle(target, { timeoutMs: 10_000 });
    await store.close();
    expect(await waiting).toBe('settled');
    for (const call of [
      () => store.claim(target, claimOptions()),
      () => store.get(target),
      () => store.forget({ tenant: 't' }),
    ]) {
      expect(StoreUnavailableError.isInstance(await rejection(call()))).toBe(true);
    }
    await store.close();
  });

  it('waitForSettle rejects with the abort reason and honours timeoutMs before the lease', async () => {
    const store = await ready();
    const target = ref();
    await store.claim(target, claimOptions({ leaseMs: 5_000 }));
    const controller = new AbortController();
    const waiting = store.waitForSettle(target, { timeoutMs: 10_000, signal: controller.signal });
    controller.abort(new Error('stop'));
    expect(String(await rejection(waiting))).toContain('stop');
    const startedMs = Date.now();
    expect(await store.waitForSettle(target, { timeoutMs: 100 })).toBe('timeout');
    expect(Date.now() - startedMs).toBeLessThan(1_000);
  });

  it('refuses options it cannot use', () => {
    expect(() => new SQLiteStore({ path: '' })).toThrow(TypeError);
    expect(() => new SQLiteStore({ path: ':memory:' })).toThrow(/MemoryStore/);
    expect(() => new SQLiteStore({ path: 'x.db', busyTimeoutMs: -1 })).toThrow(TypeError);
    expect(() => new SQLiteStore({ path: 'x.db', table: 'a\u0000b' })).toThrow(TypeError);
    expect(() => new SQLiteStore({ path: 'x.db', synchronous: 'off' as never })).toThrow(TypeError);
  });
});
