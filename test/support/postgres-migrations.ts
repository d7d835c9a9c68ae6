// Tables as an earlier version left them, for the migration tests: migrations 0001..upTo applied
// and recorded, with `rows` records in it written as that version wrote them; and the shape of a
// schema (columns, indexes, constraints) to compare an upgraded table with a fresh one.
import type pg from 'pg';
import { planMigration } from '../../packages/stores/src/postgres/migration-steps.js';
import { postgresNames, renderSql } from '../../packages/stores/src/postgres/names.js';
import { migrations, statements } from '../../packages/stores/src/postgres/statements.js';
import { uniqueSchemaName } from './postgres.js';

/**
 * One migration's statements on an empty or small table: its transactional part, then each online
 * step once (CREATE INDEX CONCURRENTLY cannot share a multi-statement query).
 */
export async function applyMigration(
  pool: pg.Pool,
  placeholders: Readonly<Record<string, string>>,
  text: string,
  name: string,
): Promise<void> {
  const plan = planMigration(text, name);
  await pool.query(renderSql(plan.head, placeholders));
  for (const step of plan.steps) {
    await pool.query(renderSql(step.text.replaceAll('{{batch_limit}}', '1000000000'), placeholders));
  }
}

/** A schema at migration `upTo` holding `rows` completed records (over 20 tenants). */
export async function previousVersionTable(
  pool: pg.Pool,
  upTo: number,
  rows: number,
): Promise<{ schema: string; table: string }> {
  const schema = uniqueSchemaName('migrate');
  const names = postgresNames(schema, 'idempotency_records');
  await pool.query(`CREATE SCHEMA ${names.schema}`);
  await pool.query(renderSql(statements.ensureMigrationsTable, names.placeholders));
  for (const migration of migrations.filter((each) => each.version <= upTo)) {
    await applyMigration(pool, names.placeholders, migration.text, migration.name);
    await pool.query(`INSERT INTO ${names.placeholders.migrations_table} (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
  }
  if (rows > 0) {
    await pool.query(
      `INSERT INTO ${names.table} (tenant, key, tool, fingerprint, state, fence, attempt, owner, claimed_at,
         lease_expires_at, expires_at, retention_ms, outcome, waited)
       SELECT 't' || (g % 20), md5(g::text), 'refund', 'f', 'completed', 1, 1, 'o',
              statement_timestamp() - (g || ' ms')::interval, statement_timestamp(),
              statement_timestamp() + interval '1 day', 86400000, '"ok"', false
         FROM generate_series(1, $1::int) g`,
      [rows],
    );
  }
  return { schema, table: names.table };
}

/** Columns, indexes (with validity) and constraints of a schema's tables, schema name left out. */
export async function schemaShape(pool: pg.Pool, schema: string): Promise<unknown> {
  const columns = await pool.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1 ORDER BY table_name, column_name`,
    [schema],
  );
  const indexes = await pool.query(
    `SELECT c.relname AS name, replace(replace(pg_get_indexdef(i.indexrelid), $1, 'S'), $2 || '.', 'S.') AS definition,
            i.indisvalid AS valid
       FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $2 ORDER BY c.relname`,
    [`"${schema}"`, schema],
  );
  const constraints = await pool.query(
    `SELECT conname, contype, convalidated FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace
      WHERE n.nspname = $1 ORDER BY conname`,
    [schema],
  );
  return { columns: columns.rows, indexes: indexes.rows, constraints: constraints.rows };
}
