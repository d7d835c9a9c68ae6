-- Starts the SELECT that answers claim.sql and get.sql: a record's columns, times as whole epoch
-- milliseconds (float8), up to `resolution` (`approval`: 0010_approvals.sql), which the statement writes with what follows it.
SELECT
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms, retention_ms,
  outcome, outcome_bytes, error_type, error_message,
  run_id, call_id, description, codec,
  floor(extract(epoch FROM claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
  approval,
