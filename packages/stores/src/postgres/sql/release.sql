-- release: delete the record if the holder ($3 fence, $4 owner) is current and in progress.
-- $1 tenant, $2 key, $3 fence, $4 owner.
-- Returns no row when the record is absent (or past retention); otherwise one row: the record
-- as it was before this statement and `changed`.
-- Same lock-then-change shape as renew.sql (see there).
WITH current AS (
  SELECT *
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
  FOR UPDATE
), released AS (
  DELETE FROM {{table}} AS record
  USING current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state = 'in_progress' AND current.fence = $3::bigint AND current.owner = $4
  RETURNING 1
)
SELECT
  EXISTS (SELECT 1 FROM released) AS changed,
  current.tenant, current.key, current.tool, current.fingerprint, current.state,
  current.fence, current.attempt, current.owner,
  floor(extract(epoch FROM current.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM current.expires_at) * 1000)::float8 AS expires_at_ms,
  current.outcome, current.outcome_bytes, current.error_type, current.error_message,
  -- [#20 listing]
  current.run_id, current.call_id, current.description,
  floor(extract(epoch FROM current.claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM current.updated_at) * 1000)::float8 AS updated_at_ms,
  current.resolution
FROM current;
