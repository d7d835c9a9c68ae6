-- release: delete the record if the holder ($3 fence, $4 owner) is current and in progress.
-- $1 tenant, $2 key, $3 fence, $4 owner.
-- Locks the row only if it matches the holder; answered as fragments/row-seen.sql says
-- (`ambiguous` → the store sends release-locked.sql).
WITH change AS (
  DELETE FROM {{table}} AS record
  WHERE record.tenant = $1 AND record.key = $2 AND record.expires_at > statement_timestamp()
    AND record.state = 'in_progress' AND record.fence = $3::bigint AND record.owner = $4
  RETURNING 1
), seen AS (
  SELECT *, (state = 'in_progress' AND fence = $3::bigint AND owner = $4) AS matched
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
)
-- @include row-seen
