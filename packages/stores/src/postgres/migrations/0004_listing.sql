-- Migration 0004: what an operator sees of a record, the listing indexes, and the resolution
-- journal. Placeholders as in 0001_init.sql, and:
--   {{resolutions_table}}        schema-qualified resolution journal
--   {{list_tenant_index}}        partial listing index per tenant (unqualified)
--   {{list_all_index}}           partial listing index across tenants (unqualified)
--   {{resolutions_key_index}}    journal index by record (unqualified)
--   {{resolutions_expires_index}} journal index on expires_at (unqualified)
--
-- `updated_at` is when the record entered its current state (listing orders by it). Rows that
-- exist when this runs take their claim time. A store of the previous version that writes during
-- a rolling upgrade leaves `updated_at` at the default (the insert) on the rows it settles: they
-- list at their claim time until the next write of this version.
--
-- Online on a large table: the part above the first `-- @online` line only
-- changes the catalog, in the migration's transaction; the backfill runs in batches of its own
-- transactions, NOT NULL is proven by a constraint validated without blocking writes, and the
-- indexes are built CONCURRENTLY, each step resumable (ensure-schema.ts, docs/postgres.md,
-- "Migrations"). Every statement here can run again after an interruption.
ALTER TABLE {{table}}
  ADD COLUMN IF NOT EXISTS run_id text,
  ADD COLUMN IF NOT EXISTS call_id text,
  ADD COLUMN IF NOT EXISTS description text,
  ADD COLUMN IF NOT EXISTS updated_at timestamptz,
  ADD COLUMN IF NOT EXISTS resolution jsonb;
-- New rows (this version or the previous one) get the insert time; rows that exist keep NULL
-- until the backfill gives them their claim time.
ALTER TABLE {{table}}
  ALTER COLUMN updated_at SET DEFAULT date_trunc('milliseconds', statement_timestamp());

-- One row per operator resolution, written in the same statement as the resolution
-- (resolve-completed.sql, resolve-released.sql); kept until expires_at, also after a released
-- resolution deleted its record.
CREATE TABLE IF NOT EXISTS {{resolutions_table}} (
  tenant        text        NOT NULL,
  key           text        NOT NULL,
  tool          text        NOT NULL,
  action        text        NOT NULL CHECK (action IN ('completed', 'released')),
  from_state    text        NOT NULL CHECK (from_state IN ('indeterminate', 'abandoned')),
  fence         bigint      NOT NULL,
  attempt       integer     NOT NULL,
  error_type    text,
  error_message text,
  resolved_by   text,
  reason        text,
  resolved_at   timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS {{resolutions_key_index}} ON {{resolutions_table}} (tenant, key, resolved_at);
CREATE INDEX IF NOT EXISTS {{resolutions_expires_index}} ON {{resolutions_table}} (expires_at);

-- @online batched backfill updated_at
-- Whole milliseconds, as every write of this version stores it (the listing cursor is in ms).
UPDATE {{table}} SET updated_at = date_trunc('milliseconds', claimed_at)
 WHERE ctid = ANY (ARRAY(SELECT ctid FROM {{table}} WHERE updated_at IS NULL LIMIT {{batch_limit}}));

-- @online statement updated_at not null
-- A CHECK validated under SHARE UPDATE EXCLUSIVE (writes go on) lets SET NOT NULL skip its scan
-- under ACCESS EXCLUSIVE (PostgreSQL 12+).
DO $toolfence_0004$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_attribute
              WHERE attrelid = {{table_literal}}::regclass AND attname = 'updated_at' AND NOT attnotnull) THEN
    IF NOT EXISTS (SELECT 1 FROM pg_constraint
                    WHERE conrelid = {{table_literal}}::regclass AND conname = 'toolfence_updated_at_not_null') THEN
      ALTER TABLE {{table}} ADD CONSTRAINT toolfence_updated_at_not_null CHECK (updated_at IS NOT NULL) NOT VALID;
    END IF;
    ALTER TABLE {{table}} VALIDATE CONSTRAINT toolfence_updated_at_not_null;
    ALTER TABLE {{table}} ALTER COLUMN updated_at SET NOT NULL;
  END IF;
  ALTER TABLE {{table}} DROP CONSTRAINT IF EXISTS toolfence_updated_at_not_null;
END $toolfence_0004$;

-- @online index list_tenant_index
-- Partial: only the states an operator acts on (a busy table is mostly completed rows, which
-- are listed only when asked for, from the primary key).
CREATE INDEX CONCURRENTLY IF NOT EXISTS {{list_tenant_index}} ON {{table}} (tenant COLLATE "C", updated_at, key COLLATE "C")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');

-- @online index list_all_index
CREATE INDEX CONCURRENTLY IF NOT EXISTS {{list_all_index}} ON {{table}} (updated_at, tenant COLLATE "C", key COLLATE "C")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');
