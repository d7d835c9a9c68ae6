-- complete-locked: the fallback of complete.sql, sent only when it answered `ambiguous` (same
-- arguments, same answer without `ambiguous`). Record the outcome if the holder ($3 fence, $4 owner) is current and the record
-- is not already completed (an attempt marked indeterminate or abandoned may still state it).
-- $1 tenant, $2 key, $3 fence, $4 owner, $5 outcome as text (NULL when it holds NUL),
-- $6 retention ms, $7 outcome as UTF-8 bytes (NULL unless it holds NUL; see 0003_outcome_bytes.sql).
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, change AS (
  UPDATE {{table}} AS record
-- @include complete-writes
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state <> 'completed' AND current.fence = $3::bigint AND current.owner = $4
  RETURNING 1
)
-- @include row-before-change
