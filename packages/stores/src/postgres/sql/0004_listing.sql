-- Migration 0004: what an operator sees of a record, the listing indexes, and the resolution
-- journal (#20). Placeholders as in 0001_init.sql, and:
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
ALTER TABLE {{table}}
  ADD COLUMN run_id text,
  ADD COLUMN call_id text,
  ADD COLUMN description text,
  ADD COLUMN updated_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', statement_timestamp()),
  ADD COLUMN resolution jsonb;
-- Whole milliseconds, as every write of this version stores it (the listing cursor is in ms).
UPDATE {{table}} SET updated_at = date_trunc('milliseconds', claimed_at);

-- Partial: only the states an operator acts on (a busy table is mostly completed rows, which
-- are listed only when asked for, from the primary key).
CREATE INDEX {{list_tenant_index}} ON {{table}} (tenant COLLATE "C", updated_at, key COLLATE "C")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');
CREATE INDEX {{list_all_index}} ON {{table}} (updated_at, tenant COLLATE "C", key COLLATE "C")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');

-- One row per operator resolution, written in the same statement as the resolution
-- (resolve-completed.sql, resolve-released.sql); kept until expires_at, also after a released
-- resolution deleted its record.
CREATE TABLE {{resolutions_table}} (
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
CREATE INDEX {{resolutions_key_index}} ON {{resolutions_table}} (tenant, key, resolved_at);
CREATE INDEX {{resolutions_expires_index}} ON {{resolutions_table}} (expires_at);
