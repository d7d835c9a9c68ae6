-- Migration 0004: an operator may resolve a record in progress: one whose holder's
-- lease expired (the holder is gone), or, forced with a reason, one whose lease is live. The
-- journal keeps `in_progress` as a from_state and says whether the resolution was forced.
-- And each record says which codec wrote it (item 5): `codec`, kept with the claim that starts a
-- life of the key. SQLite cannot change a CHECK constraint: the journal is rebuilt under the same name, in the
-- migration's transaction. Placeholders as in 0002_listing.sql and 0003_resolutions_expiry.sql, and:
--   {{resolutions_table_next}}  the rebuilt journal, before it takes the old one's name
--   {{resolutions_table_name}}  the journal's name as RENAME TO takes it
ALTER TABLE {{table}} ADD COLUMN codec TEXT;
CREATE TABLE {{resolutions_table_next}} (
  tenant        TEXT    NOT NULL,
  "key"         TEXT    NOT NULL,
  tool          TEXT    NOT NULL,
  action        TEXT    NOT NULL CHECK (action IN ('completed', 'released')),
  from_state    TEXT    NOT NULL CHECK (from_state IN ('indeterminate', 'abandoned', 'in_progress')),
  fence         INTEGER NOT NULL,
  attempt       INTEGER NOT NULL,
  error_type    TEXT,
  error_message TEXT,
  resolved_by   TEXT,
  reason        TEXT,
  resolved_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL,
  forced        INTEGER NOT NULL DEFAULT 0 CHECK (forced IN (0, 1))
);
INSERT INTO {{resolutions_table_next}}
  (tenant, "key", tool, action, from_state, fence, attempt, error_type, error_message,
   resolved_by, reason, resolved_at_ms, expires_at_ms)
SELECT tenant, "key", tool, action, from_state, fence, attempt, error_type, error_message,
   resolved_by, reason, resolved_at_ms, expires_at_ms
FROM {{resolutions_table}} ORDER BY rowid;
DROP TABLE {{resolutions_table}};
ALTER TABLE {{resolutions_table_next}} RENAME TO {{resolutions_table_name}};
CREATE INDEX {{resolutions_index}} ON {{resolutions_table}} (tenant, "key", resolved_at_ms);
CREATE INDEX {{resolutions_expires_index}} ON {{resolutions_table}} (expires_at_ms);
