-- release-locked: the fallback of release.sql, sent only when it answered `ambiguous` (same
-- arguments, same answer without `ambiguous`). Delete the record if the holder ($3 fence, $4 owner) is current and in progress.
-- $1 tenant, $2 key, $3 fence, $4 owner.
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, change AS (
  DELETE FROM {{table}} AS record
  USING current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state = 'in_progress' AND current.fence = $3::bigint AND current.owner = $4
  RETURNING 1
)
-- @include row-before-change
