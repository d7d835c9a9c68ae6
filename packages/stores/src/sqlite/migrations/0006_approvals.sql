-- Migration 0006: approvals (docs/sqlite.md, "Approvals"). A call that needs an operator's
-- approval has a record before its claim: `awaiting_approval`, `approved` or `denied`, at fence 0
-- and attempt 0, so no holder's write (fence >= 1) matches it; `approval` holds the operator's
-- decision as JSON (ApprovalEntry), kept by the claim that consumes it. SQLite cannot change a
-- CHECK constraint: the table is rebuilt under the same name, with every row, in the migration's
-- transaction, with the sweep bound of 0005_sweep_bound.sql (the column and its index, the only
-- index 0005 left: the listing reads the primary key or the table, so it also finds pending
-- approvals). Placeholders as in 0004_resolve_in_progress.sql and 0005_sweep_bound.sql, and:
--   {{table_next}}  the rebuilt table, before it takes the old one's name
--   {{table_name}}  the table's name as RENAME TO takes it
CREATE TABLE {{table_next}} (
  tenant              TEXT    NOT NULL,
  "key"               TEXT    NOT NULL,
  tool                TEXT    NOT NULL,
  fingerprint         TEXT    NOT NULL,
  state               TEXT    NOT NULL
                      CHECK (state IN ('in_progress', 'completed', 'indeterminate', 'abandoned',
                                       'awaiting_approval', 'approved', 'denied')),
  fence               INTEGER NOT NULL CHECK (fence >= 0),
  attempt             INTEGER NOT NULL CHECK (attempt >= 0),
  owner               TEXT    NOT NULL,
  lease_expires_at_ms INTEGER NOT NULL,
  expires_at_ms       INTEGER NOT NULL,
  retention_ms        INTEGER NOT NULL CHECK (retention_ms >= 1),
  outcome             TEXT,
  error_type          TEXT,
  error_message       TEXT,
  run_id              TEXT,
  call_id             TEXT,
  description         TEXT,
  claimed_at_ms       INTEGER,
  updated_at_ms       INTEGER NOT NULL DEFAULT 0,
  resolution          TEXT,
  codec               TEXT,
  approval            TEXT,
  sweep_at_ms         INTEGER,
  -- Only a record before its claim has no attempt: a claimed one keeps fence and attempt >= 1.
  CHECK ((fence >= 1 AND attempt >= 1)
         OR (fence = 0 AND attempt = 0 AND state IN ('awaiting_approval', 'approved', 'denied'))),
  PRIMARY KEY (tenant, "key")
);
INSERT INTO {{table_next}}
  (tenant, "key", tool, fingerprint, state, fence, attempt, owner, lease_expires_at_ms,
   expires_at_ms, retention_ms, outcome, error_type, error_message, run_id, call_id, description,
   claimed_at_ms, updated_at_ms, resolution, codec, sweep_at_ms)
SELECT tenant, "key", tool, fingerprint, state, fence, attempt, owner, lease_expires_at_ms,
   expires_at_ms, retention_ms, outcome, error_type, error_message, run_id, call_id, description,
   claimed_at_ms, updated_at_ms, resolution, codec, sweep_at_ms
FROM {{table}} ORDER BY rowid;
DROP TABLE {{table}};
ALTER TABLE {{table_next}} RENAME TO {{table_name}};
CREATE INDEX {{sweep_index}} ON {{table}} (sweep_at_ms);
