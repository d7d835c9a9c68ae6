-- resolve-released: an operator states that an indeterminate or abandoned call had no effect;
-- the record is deleted so the call may run again.
-- $1 tenant, $2 key.
-- Locked and answered as fragments/lock-current.sql and fragments/row-before-change.sql say.
-- @include lock-current
, change AS (
  DELETE FROM {{table}} AS record
  USING current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state IN ('indeterminate', 'abandoned')
  RETURNING 1
)
-- @include row-before-change
