-- resolve-released: an operator states that an indeterminate or abandoned call had no effect;
-- the record is deleted so the call may run again.
-- $1 tenant, $2 key.
-- Returns no row when the record is absent (or past retention); otherwise one row: the record
-- as it was before this statement and `changed`.
-- Same lock-then-change shape as renew.sql (see there).
WITH current AS (
  SELECT *
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
  FOR UPDATE
), resolved AS (
  DELETE FROM {{table}} AS record
  USING current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state IN ('indeterminate', 'abandoned')
  RETURNING 1
)
SELECT
  EXISTS (SELECT 1 FROM resolved) AS changed,
  current.tenant, current.key, current.tool, current.fingerprint, current.state,
  current.fence, current.attempt, current.owner,
  floor(extract(epoch FROM current.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM current.expires_at) * 1000)::float8 AS expires_at_ms,
  current.outcome, current.outcome_bytes, current.error_type, current.error_message
FROM current;
