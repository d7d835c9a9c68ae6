-- complete: record the outcome if the holder ($3 fence, $4 owner) is current and the record
-- is not already completed (an attempt marked indeterminate or abandoned may still state it).
-- $1 tenant, $2 key, $3 fence, $4 owner, $5 outcome as text (NULL when it holds NUL),
-- $6 retention ms, $7 outcome as UTF-8 bytes (NULL unless it holds NUL; see 0003_outcome_bytes.sql).
-- Locks the row only if it matches the holder; answered as fragments/row-seen.sql says
-- (`ambiguous` → the store sends complete-locked.sql).
WITH change AS (
  UPDATE {{table}} AS record
-- @include complete-writes
  WHERE record.tenant = $1 AND record.key = $2 AND record.expires_at > statement_timestamp()
    AND record.state <> 'completed' AND record.fence = $3::bigint AND record.owner = $4
  RETURNING 1
), seen AS (
  SELECT *, (state <> 'completed' AND fence = $3::bigint AND owner = $4) AS matched
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
)
-- @include row-seen
