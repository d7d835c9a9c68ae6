-- resolve-released: an operator states that an indeterminate or abandoned call (or one in
-- progress, see `resolvable`) had no effect;
-- the record is deleted so the call may run again.
-- $1 tenant, $2 key, $3 retention ms of the resolution entry, $4 by, $5 reason (NULL when absent),
-- $6 expected fence, $7 expected owner (the holder the operator saw; NULL: any holder),
-- $8 force (settle even a live holder).
-- The resolution entry is kept in the journal (0004_listing.sql), in this same statement and
-- on the same condition.
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, expected AS (
  SELECT 1 FROM current
  WHERE $6::bigint IS NULL OR (current.fence = $6::bigint AND current.owner = $7::text)
)
-- Settleable: indeterminate, abandoned, or in progress under a lease that expired (the holder is
-- gone) or, forced ($8), is live. A live holder's body may still take effect.
, resolvable AS (
  SELECT 1 FROM current
  WHERE EXISTS (SELECT 1 FROM expected)
    AND (current.state IN ('indeterminate', 'abandoned')
      OR (current.state = 'in_progress'
        AND (current.lease_expires_at <= statement_timestamp() OR $8::boolean)))
)
, change AS (
  DELETE FROM {{table}} AS record
  USING current
-- @include resolve-journal-open
  SELECT current.tenant, current.key, current.tool, 'released', current.state, current.fence,
    current.attempt, current.error_type, current.error_message, $4::text, $5::text,
    date_trunc('milliseconds', statement_timestamp()),
    statement_timestamp() + $3::float8 * interval '1 millisecond',
    current.state = 'in_progress' AND current.lease_expires_at > statement_timestamp()
-- @include resolve-journal-close
-- @include row-before-change
