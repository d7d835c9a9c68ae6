// Keys as people copy them, and reads that change nothing.
// - A unique abbreviation (prefix, `head…tail`, `head...tail`) names its key in inspect, resolve
//   and release; an ambiguous one is refused (exit 2) with the candidates, nothing settled.
// - list, inspect and stats open SQLite read-only: a file that is not a toolfence database (another
//   application's, or no database at all) is exit 3 and stays byte-identical (same hash, same
//   mtime, no -wal/-shm, no WAL mode); so does a resolve pointed at it.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimOptions, DAY_MS } from '../../../test/support/claims.js';
import { runCli } from '../../../test/support/run-cli.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const directory = sqliteDirectory('cli-keys');
const file = directory.file('records.db');
const tenant = 'shop';
const keyA = `9c1f${'a'.repeat(56)}e07a`;
const keyB = `9c1f${'b'.repeat(56)}0000`;
const keyC = `77${'c'.repeat(62)}`;

beforeAll(async () => {
  const store = new SQLiteStore({ path: file });
  await store.ensureSchema();
  for (const key of [keyA, keyB, keyC]) {
    const options = claimOptions({ mode: 'at-most-once' });
    const claim = await store.claim({ tenant, key }, options);
    if (claim.status !== 'acquired') throw new Error(claim.status);
    await store.markIndeterminate(
      { tenant, key },
      { fence: claim.fence, owner: options.owner },
      { type: 'Error', message: 'socket hang up' },
      DAY_MS,
    );
  }
  await store.close();
});
afterAll(() => directory.remove());

const cli = (args: readonly string[]) => runCli(['--store', `sqlite:${file}`, '--tenant', tenant, ...args]);
function stateOf(key: string): string | undefined {
  const db = new Database(file, { readonly: true });
  try {
    const row = db.prepare('SELECT state FROM toolfence_records WHERE key = ?').get(key) as
      | { state: string }
      | undefined;
    return row?.state;
  } finally {
    db.close();
  }
}

describe('keys as people copy them', () => {
  it('a unique prefix or head…tail names its key; the full key is printed', async () => {
    for (const given of ['9c1fa', '9c1f…e07a', '9c1f...e07a', '9c1faaaa', keyA]) {
      const run = await cli(['inspect', given]);
      expect(run.code, `${given}: ${run.stderr}`).toBe(0);
      expect(run.stdout).toContain(`key       ${keyA}\n`);
      if (given !== keyA) expect(run.stderr).toContain(`${given} is ${keyA}`);
    }
  }, 60_000);

  it('an ambiguous abbreviation is refused with its candidates, and settles nothing', async () => {
    for (const args of [
      ['inspect', '9c1f'],
      ['release', '9c1f'],
      ['resolve', '9c1f', '--outcome', '"paid"'],
    ]) {
      const run = await cli(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('9c1f is ambiguous: 2 records of tenant "shop" match it');
      expect(run.stderr).toContain(keyA);
      expect(run.stderr).toContain(keyB);
    }
    expect(stateOf(keyA)).toBe('indeterminate');
    expect(stateOf(keyB)).toBe('indeterminate');
  }, 60_000);

  it('resolve and release take an abbreviation; an unknown or too short one is not found', async () => {
    const resolved = await cli(['resolve', '9c1fb', '--outcome', '"refund paid"', '--by', 'ana']);
    expect(resolved.code, resolved.stderr).toBe(0);
    expect(resolved.stdout).toContain(`${keyB}: completed with the given outcome`);
    expect(stateOf(keyB)).toBe('completed');
    const released = await cli(['release', '77c…cccc', '--by', 'ana']);
    expect(released.code, released.stderr).toBe(0);
    expect(stateOf(keyC)).toBeUndefined();
    for (const given of ['9c1', 'ffff', 'ff…ff']) {
      const run = await cli(['inspect', given]);
      expect(run.code, `${given}: ${run.stderr}`).toBe(1);
    }
  }, 60_000);
});

describe('reads that change nothing', () => {
  const fingerprint = (path: string) => ({
    sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
    mtimeMs: statSync(path).mtimeMs,
    size: statSync(path).size,
  });

  it('another application’s SQLite file and a file that is no database stay byte-identical (exit 3)', async () => {
    const other = directory.file('other-app.db');
    const db = new Database(other);
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ana')",
    );
    db.close();
    const text = directory.file('notes.txt');
    writeFileSync(text, 'not a database at all\n'.repeat(100));
    for (const path of [other, text]) {
      const before = fingerprint(path);
      for (const args of [
        ['list'],
        ['stats'],
        ['inspect', keyA],
        ['list', '--json'],
        ['resolve', keyA, '--outcome', '1'],
      ]) {
        const run = await runCli(['--store', `sqlite:${path}`, ...args]);
        expect(run.code, `${path} ${args.join(' ')}: ${run.stderr}`).toBe(3);
        expect(run.stderr).toMatch(
          /StoreConfigurationError: .*(is not a toolfence database|is not an SQLite database)/,
        );
        expect(fingerprint(path), `${path} ${args.join(' ')}`).toEqual(before);
        expect(existsSync(`${path}-wal`)).toBe(false);
        expect(existsSync(`${path}-shm`)).toBe(false);
      }
    }
    const reopened = new Database(other, { readonly: true });
    expect(reopened.pragma('journal_mode', { simple: true })).toBe('delete');
    reopened.close();
  }, 120_000);

  it('list, inspect and stats on the toolfence database leave its file as it was', async () => {
    const before = fingerprint(file);
    for (const args of [['list'], ['inspect', keyA], ['stats'], ['inspect', '9c1f…e07a']]) {
      const run = await cli(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(0);
    }
    expect(fingerprint(file)).toEqual(before);
  }, 60_000);
});
