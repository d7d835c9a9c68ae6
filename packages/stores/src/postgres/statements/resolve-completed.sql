-- resolve-completed: an operator states the outcome of an indeterminate or abandoned record, or
-- of one in progress (see `resolvable`).
-- $1 tenant, $2 key, $3 outcome as text (NULL when it holds NUL), $4 retention ms,
-- $5 outcome as UTF-8 bytes (NULL unless it holds NUL; see 0003_outcome_bytes.sql),
-- $6 by, $7 reason (NULL when absent), $8 expected fence, $9 expected owner (the holder the
-- operator saw; NULL: any holder), $10 force (settle even a live holder).
-- The resolution entry is kept in the record and in the journal (0004_listing.sql), in this
-- same statement and on the same condition.
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, expected AS (
  SELECT 1 FROM current
  WHERE $8::bigint IS NULL OR (current.fence = $8::bigint AND current.owner = $9::text)
)
-- Settleable: indeterminate, abandoned, or in progress under a lease that expired (the holder is
-- gone) or, forced ($10), is live. A live holder's body may still take effect.
, resolvable AS (
  SELECT 1 FROM current
  WHERE EXISTS (SELECT 1 FROM expected)
    AND (current.state IN ('indeterminate', 'abandoned')
      OR (current.state = 'in_progress'
        AND (current.lease_expires_at <= statement_timestamp() OR $10::boolean)))
)
, change AS (
  UPDATE {{table}} AS record
  SET
    state = 'completed',
    outcome = $3,
    outcome_bytes = $5::bytea,
    error_type = NULL,
    error_message = NULL,
    expires_at = statement_timestamp() + $4::float8 * interval '1 millisecond',
    sweep_at = greatest(record.sweep_at, statement_timestamp() + $4::float8 * interval '1 millisecond'),
    updated_at = date_trunc('milliseconds', statement_timestamp()),
    resolution = jsonb_strip_nulls(jsonb_build_object(
      'key', current.key, 'tenant', current.tenant, 'tool', current.tool, 'action', 'completed',
      'fromState', current.state, 'fence', current.fence, 'attempt', current.attempt,
      'error', CASE WHEN current.error_type IS NULL THEN NULL
        ELSE jsonb_build_object('type', current.error_type, 'message', coalesce(current.error_message, '')) END,
      'by', $6::text, 'reason', $7::text,
      'forced', CASE WHEN current.state = 'in_progress' AND current.lease_expires_at > statement_timestamp()
        THEN true END,
      'atMs', floor(extract(epoch FROM statement_timestamp()) * 1000)::float8))
  FROM current
-- @include resolve-journal-open
  SELECT current.tenant, current.key, current.tool, 'completed', current.state, current.fence,
    current.attempt, current.error_type, current.error_message, $6::text, $7::text,
    date_trunc('milliseconds', statement_timestamp()),
    statement_timestamp() + $4::float8 * interval '1 millisecond',
    current.state = 'in_progress' AND current.lease_expires_at > statement_timestamp()
-- @include resolve-journal-close
-- @include row-before-change
