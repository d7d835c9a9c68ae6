-- get: read a live record. $1 tenant, $2 key. No row when absent or past retention.
SELECT
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms,
  outcome, outcome_bytes, error_type, error_message,
  -- [#20 listing]
  run_id, call_id, description,
  floor(extract(epoch FROM claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
  resolution
FROM {{table}}
WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp();
