-- Migration 0001: the records table and its retention index.
-- Append-only: never edit a migration that has shipped; add 0002_*.sql instead.
-- Placeholders (replaced with quoted identifiers by the store, never with user values):
--   {{table}}          records table
--   {{expires_index}}  index on expires_at_ms
--
-- Times are integer epoch milliseconds of the host clock (every process on one host reads the
-- same clock). Text columns are length-counted by SQLite, so an outcome holding NUL round-trips.
-- A rowid table, not WITHOUT ROWID: outcomes can be megabytes, and WITHOUT ROWID suits small rows.

CREATE TABLE {{table}} (
  tenant              TEXT    NOT NULL,
  "key"               TEXT    NOT NULL,
  tool                TEXT    NOT NULL,
  fingerprint         TEXT    NOT NULL,
  state               TEXT    NOT NULL
                      CHECK (state IN ('in_progress', 'completed', 'indeterminate', 'abandoned')),
  fence               INTEGER NOT NULL CHECK (fence >= 1),
  attempt             INTEGER NOT NULL CHECK (attempt >= 1),
  owner               TEXT    NOT NULL,
  lease_expires_at_ms INTEGER NOT NULL,
  -- Retention deadline: past it the row is treated as absent and cleanup() deletes it.
  expires_at_ms       INTEGER NOT NULL,
  -- Retention window of the current attempt, so renew() can move expires_at_ms with the lease.
  retention_ms        INTEGER NOT NULL CHECK (retention_ms >= 1),
  outcome             TEXT,
  error_type          TEXT,
  error_message       TEXT,
  PRIMARY KEY (tenant, "key")
);

CREATE INDEX {{expires_index}} ON {{table}} (expires_at_ms);
