// Every release that landed on the PostgreSQL store, logged by the store itself: a trigger on
// the records table of the run's own schema writes the key and the database clock of each row
// deleted. A release deletes the record (the key's next claim starts again at fence 1), and the
// workers can report only those whose reply came back; one whose reply was lost (the store froze
// past the deadline, the connection was killed) may still have been executed. TRUNCATE (the
// record-loss fault) fires no row trigger: losses are tracked apart. Nothing else deletes rows
// in a fault run (autoCleanup is off, nobody forgets).
import pg from 'pg';
import type { KeyRelease } from './checks.js';

const logTable = 'tf_faults_deletions';

/** DDL of the log and its trigger, for `schema` and its records table `recordsTable` (qualified). */
export function postgresDeletionLogDdl(schema: string, recordsTable: string): string {
  const s = pg.escapeIdentifier(schema);
  return `
    CREATE TABLE ${s}.${logTable} (key text NOT NULL, fence bigint NOT NULL, at_ms float8 NOT NULL);
    CREATE FUNCTION ${s}.tf_faults_log_deletion() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ${s}.${logTable} (key, fence, at_ms)
      VALUES (OLD.key, OLD.fence, floor(extract(epoch FROM clock_timestamp()) * 1000));
      RETURN OLD;
    END $$;
    CREATE TRIGGER tf_faults_log_deletion AFTER DELETE ON ${recordsTable}
      FOR EACH ROW EXECUTE FUNCTION ${s}.tf_faults_log_deletion();`;
}

/**
 * The deletions, as releases: the row was deleted at `at_ms` (floored to the ms; the machine's
 * clock, shared with Date.now() of every process), so inside [at_ms, at_ms + 1]. A claim sent
 * later cannot have been answered from the deleted row: it either saw it held (busy, no
 * execution) or waited on its lock and found it gone.
 */
export async function readPostgresDeletions(pool: pg.Pool, schema: string): Promise<KeyRelease[]> {
  const result = await pool.query(
    `SELECT key, at_ms FROM ${pg.escapeIdentifier(schema)}.${logTable} ORDER BY at_ms`,
  );
  return (result.rows as { key: string; at_ms: number }[]).map((row) => ({
    key: row.key,
    startMs: Number(row.at_ms),
    endMs: Number(row.at_ms) + 1,
  }));
}
