-- mark-indeterminate-locked: the fallback of mark-indeterminate.sql, sent only when it answered
-- `ambiguous` (same arguments, same answer without `ambiguous`). Keep the claim as indeterminate with the error, if the holder
-- ($3 fence, $4 owner) is current and in progress. Retention restarts.
-- $1 tenant, $2 key, $3 fence, $4 owner, $5 error type, $6 error message, $7 retention ms.
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, change AS (
  UPDATE {{table}} AS record
-- @include mark-writes
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state = 'in_progress' AND current.fence = $3::bigint AND current.owner = $4
  RETURNING 1
)
-- @include row-before-change
