-- Migration 0002: what an operator sees of a record, the listing indexes and the resolution
-- journal. Placeholders as in 0001_init.sql, and:
--   {{resolutions_table}}   resolution journal
--   {{list_tenant_index}}   partial listing index per tenant
--   {{list_all_index}}      partial listing index across tenants
--   {{resolutions_index}}   journal index by record
--
-- updated_at_ms is when the record entered its current state (listing orders by it). Rows that
-- exist when this runs get their retention deadline minus their retention window: the
-- settlement of a settled record, the lease deadline of one in progress.
ALTER TABLE {{table}} ADD COLUMN run_id TEXT;
ALTER TABLE {{table}} ADD COLUMN call_id TEXT;
ALTER TABLE {{table}} ADD COLUMN description TEXT;
ALTER TABLE {{table}} ADD COLUMN claimed_at_ms INTEGER;
ALTER TABLE {{table}} ADD COLUMN updated_at_ms INTEGER NOT NULL DEFAULT 0;
-- The operator resolution that completed the record, as JSON (ResolutionEntry).
ALTER TABLE {{table}} ADD COLUMN resolution TEXT;
UPDATE {{table}} SET updated_at_ms = expires_at_ms - retention_ms;

-- Partial: only the states an operator acts on.
CREATE INDEX {{list_tenant_index}} ON {{table}} (tenant, updated_at_ms, "key")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');
CREATE INDEX {{list_all_index}} ON {{table}} (updated_at_ms, tenant, "key")
  WHERE state IN ('in_progress', 'indeterminate', 'abandoned');

-- One row per operator resolution, written in the same transaction as the resolution; kept
-- until expires_at_ms, also after a released resolution deleted its record.
CREATE TABLE {{resolutions_table}} (
  tenant        TEXT    NOT NULL,
  "key"         TEXT    NOT NULL,
  tool          TEXT    NOT NULL,
  action        TEXT    NOT NULL CHECK (action IN ('completed', 'released')),
  from_state    TEXT    NOT NULL CHECK (from_state IN ('indeterminate', 'abandoned')),
  fence         INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  error_type    TEXT,
  error_message TEXT,
  resolved_by   TEXT,
  reason        TEXT,
  resolved_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
);
CREATE INDEX {{resolutions_index}} ON {{resolutions_table}} (tenant, "key", resolved_at_ms);
