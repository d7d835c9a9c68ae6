-- resolve-released: an operator states that an indeterminate or abandoned call had no effect;
-- the record is deleted so the call may run again.
-- $1 tenant, $2 key, [#20 listing] $3 retention ms of the resolution entry, $4 by, $5 reason.
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
), journal AS (
  -- [#20 listing] the resolution entry, in the same statement and on the same condition
  INSERT INTO {{resolutions_table}} (
    tenant, key, tool, action, from_state, fence, attempt, error_type, error_message,
    resolved_by, reason, resolved_at, expires_at
  )
  SELECT current.tenant, current.key, current.tool, 'released', current.state, current.fence,
    current.attempt, current.error_type, current.error_message, $4::text, $5::text,
    date_trunc('milliseconds', statement_timestamp()),
    statement_timestamp() + $3::float8 * interval '1 millisecond'
  FROM current
  WHERE current.state IN ('indeterminate', 'abandoned')
)
SELECT
  EXISTS (SELECT 1 FROM resolved) AS changed,
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
