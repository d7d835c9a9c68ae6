// SQLiteStore.ensureSchema: the migrations of sql/ applied in order, once, in one BEGIN IMMEDIATE
// transaction (one process applies, the others wait for the lock and find nothing to do).

import type { Connection, RecordsDatabase } from './backend.js';
import { render } from './names.js';
import { migrations } from './statements.js';

function applyMigrations(db: RecordsDatabase, connection: Connection): number[] {
  const migrationsTable = db.placeholders.migrations_table as string;
  connection.db.exec(db.sql.ensureMigrationsTable);
  const done = new Set(
    (connection.db.prepare(`SELECT version FROM ${migrationsTable}`).all() as { version: number }[]).map(
      (row) => row.version,
    ),
  );
  const appliedNow: number[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    connection.db.exec(render(migration.text, db.placeholders));
    connection.db
      .prepare(`INSERT INTO ${migrationsTable} (version, name, applied_at_ms) VALUES (?, ?, ?)`)
      .run(migration.version, migration.name, Date.now());
    appliedNow.push(migration.version);
  }
  return appliedNow;
}

/** The versions this call applied. */
export async function ensureSchema(db: RecordsDatabase): Promise<number[]> {
  db.assertWritable('ensureSchema');
  return db.withLock('ensureSchema', (connection) => {
    const versions = connection.immediate(() => applyMigrations(db, connection)) as number[];
    // Statements that failed to prepare before the table existed are prepared again on use.
    connection.statements.clear();
    return versions;
  });
}
