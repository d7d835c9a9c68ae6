/**
 * SQLite for tests: one fresh directory per test file under the OS temp directory (removed after),
 * so no test shares a database file with another. No server is needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory for database files; `remove()` deletes it and everything in it. */
export function sqliteDirectory(label: string): {
  readonly path: string;
  file(name: string): string;
  remove(): void;
} {
  const path = mkdtempSync(join(tmpdir(), `toolfence-sqlite-${label}-`));
  return {
    path,
    file: (name) => join(path, name),
    remove: () => rmSync(path, { recursive: true, force: true }),
  };
}
