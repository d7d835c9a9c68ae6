-- A fresh claim: fence 1, attempt 1. Replaces an expired row of the same key (the caller checked
-- that the row, if any, is past its retention deadline, inside the same transaction). The last
-- value is the sweep bound, the retention deadline itself (0005_sweep_bound.sql).
INSERT OR REPLACE INTO {{table}}
  (tenant, "key", tool, fingerprint, state, fence, attempt, owner,
   lease_expires_at_ms, expires_at_ms, retention_ms, outcome, error_type, error_message,
   run_id, call_id, description, claimed_at_ms, updated_at_ms, resolution, codec, sweep_at_ms)
VALUES (?, ?, ?, ?, 'in_progress', 1, 1, ?, ?, ?, ?, NULL, NULL, NULL, ?, ?, ?, ?, ?, NULL, ?, ?);
