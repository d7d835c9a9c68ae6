-- Ends a lock-then-change statement: no row when the record is absent (or past retention);
-- otherwise the record as it was before the statement (with what it keeps for operators) and
-- `changed` (the `change` CTE ran).
SELECT
  EXISTS (SELECT 1 FROM change) AS changed,
  current.tenant, current.key, current.tool, current.fingerprint, current.state,
  current.fence, current.attempt, current.owner,
  floor(extract(epoch FROM current.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM current.expires_at) * 1000)::float8 AS expires_at_ms, current.retention_ms,
  current.outcome, current.outcome_bytes, current.error_type, current.error_message,
  current.run_id, current.call_id, current.description, current.codec,
  floor(extract(epoch FROM current.claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM current.updated_at) * 1000)::float8 AS updated_at_ms,
  current.resolution, current.approval
FROM current;
