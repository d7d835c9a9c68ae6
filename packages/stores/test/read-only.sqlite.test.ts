// SQLiteStore({ readOnly: true }): reads work, every write and ensureSchema are refused with
// StoreConfigurationError before anything is written, and a file without the records table (or
// no database at all) is a StoreConfigurationError that leaves the file as it was.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { StoreConfigurationError } from '@toolfence/core';
import { SQLiteStore } from '@toolfence/stores/sqlite';
import Database from 'better-sqlite3';
import { afterAll, expect, it } from 'vitest';
import { claimOptions, DAY_MS } from '../../../test/support/claims.js';
import { sqliteDirectory } from '../../../test/support/sqlite.js';

const directory = sqliteDirectory('read-only');
afterAll(() => directory.remove());
const hash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

it('reads a toolfence database and refuses every write', async () => {
  const file = directory.file('records.db');
  const writer = new SQLiteStore({ path: file });
  await writer.ensureSchema();
  const ref = { tenant: 't', key: 'k' };
  const options = claimOptions();
  const claim = await writer.claim(ref, options);
  expect(claim.status).toBe('acquired');
  await writer.close();

  const reader = new SQLiteStore({ path: file, readOnly: true });
  expect(await reader.get(ref)).toMatchObject({ state: 'in_progress', owner: options.owner });
  expect((await reader.list({ tenant: 't', states: ['in_progress'], limit: 10 })).records).toHaveLength(1);
  expect(await reader.resolutions(ref)).toEqual([]);
  const before = hash(file);
  const holder = { fence: 1, owner: options.owner };
  for (const write of [
    () => reader.ensureSchema(),
    () => reader.claim({ tenant: 't', key: 'other' }, claimOptions()),
    () => reader.renew(ref, holder, 30_000),
    () => reader.complete(ref, holder, '"x"', DAY_MS),
    () => reader.release(ref, holder),
    () => reader.resolve(ref, { released: true }, DAY_MS),
    () => reader.forget({ tenant: 't' }),
    () => reader.cleanup(),
  ]) {
    await expect(write()).rejects.toSatisfy((error) => StoreConfigurationError.isInstance(error));
  }
  // A claim answered from the read alone (busy) needs no write.
  expect(await reader.claim(ref, claimOptions())).toMatchObject({ status: 'busy' });
  await reader.close();
  expect(hash(file)).toBe(before);
});

it('a file that is not a toolfence database is a StoreConfigurationError and stays as it was', async () => {
  const other = directory.file('other.db');
  const db = new Database(other);
  db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)');
  db.close();
  const text = directory.file('notes.txt');
  writeFileSync(text, 'hello\n'.repeat(200));
  for (const path of [other, text]) {
    const before = hash(path);
    const store = new SQLiteStore({ path, readOnly: true });
    await expect(store.get({ tenant: 't', key: 'k' })).rejects.toSatisfy((error) =>
      StoreConfigurationError.isInstance(error),
    );
    await store.close();
    expect(hash(path)).toBe(before);
  }
  expect(() => new SQLiteStore({ path: other, readOnly: 'yes' as unknown as boolean })).toThrow(TypeError);
});
