-- resolve-completed: an operator states the outcome of an indeterminate or abandoned record.
-- $1 tenant, $2 key, $3 outcome as text (NULL when it holds NUL), $4 retention ms,
-- $5 outcome as UTF-8 bytes (NULL unless it holds NUL; see 0003_outcome_bytes.sql),
-- [#20 listing] $6 by, $7 reason (NULL when absent).
-- Returns no row when the record is absent (or past retention); otherwise one row: the record
-- as it was before this statement and `changed`.
-- Same lock-then-update shape as renew.sql (see there).
WITH current AS (
  SELECT *
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
  FOR UPDATE
), resolved AS (
  UPDATE {{table}} AS record
  SET
    state = 'completed',
    outcome = $3,
    outcome_bytes = $5::bytea,
    error_type = NULL,
    error_message = NULL,
    expires_at = statement_timestamp() + $4::float8 * interval '1 millisecond',
    -- [#20 listing]
    updated_at = date_trunc('milliseconds', statement_timestamp()),
    resolution = jsonb_strip_nulls(jsonb_build_object(
      'key', current.key, 'tenant', current.tenant, 'tool', current.tool, 'action', 'completed',
      'fromState', current.state, 'fence', current.fence, 'attempt', current.attempt,
      'error', CASE WHEN current.error_type IS NULL THEN NULL
        ELSE jsonb_build_object('type', current.error_type, 'message', coalesce(current.error_message, '')) END,
      'by', $6::text, 'reason', $7::text,
      'atMs', floor(extract(epoch FROM statement_timestamp()) * 1000)::float8))
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state IN ('indeterminate', 'abandoned')
  RETURNING 1
), journal AS (
  -- [#20 listing] the resolution entry, in the same statement and on the same condition
  INSERT INTO {{resolutions_table}} (
    tenant, key, tool, action, from_state, fence, attempt, error_type, error_message,
    resolved_by, reason, resolved_at, expires_at
  )
  SELECT current.tenant, current.key, current.tool, 'completed', current.state, current.fence,
    current.attempt, current.error_type, current.error_message, $6::text, $7::text,
    date_trunc('milliseconds', statement_timestamp()),
    statement_timestamp() + $4::float8 * interval '1 millisecond'
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
