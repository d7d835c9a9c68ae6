-- resolve-completed: an operator states the outcome of an indeterminate or abandoned record.
-- $1 tenant, $2 key, $3 outcome as text (NULL when it holds NUL), $4 retention ms,
-- $5 outcome as UTF-8 bytes (NULL unless it holds NUL; see 0003_outcome_bytes.sql).
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, change AS (
  UPDATE {{table}} AS record
  SET
    state = 'completed',
    outcome = $3,
    outcome_bytes = $5::bytea,
    error_type = NULL,
    error_message = NULL,
    expires_at = statement_timestamp() + $4::float8 * interval '1 millisecond'
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state IN ('indeterminate', 'abandoned')
  RETURNING 1
)
-- @include row-before-change
