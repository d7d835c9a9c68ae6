-- renew-locked: the fallback of renew.sql (same arguments, same answer without `ambiguous`), sent
-- only when renew.sql answered `ambiguous`: extend the lease if the holder ($3 fence, $4 owner) is
-- current and in progress, deciding on the row locked FOR UPDATE.
-- $1 tenant, $2 key, $3 fence, $4 owner, $5 lease ms.
-- Returns no row when the record is absent (or past retention); otherwise one row with the
-- record as it was (state, fence, owner) and renewed_lease_ms (NULL when nothing changed).
--
-- `current` locks the row with SELECT ... FOR UPDATE, which under READ COMMITTED re-reads the
-- latest committed version, so the condition is judged on what concurrent callers wrote, and
-- a no-match is reported with the reason in the same statement.
WITH current AS (
  SELECT tenant, key, state, fence, owner
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
  FOR UPDATE
), renewed AS (
  UPDATE {{table}} AS record
-- @include renew-writes
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state = 'in_progress' AND current.fence = $3::bigint AND current.owner = $4
  RETURNING floor(extract(epoch FROM record.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms
)
SELECT current.state, current.fence, current.owner, renewed.lease_expires_at_ms AS renewed_lease_ms
FROM current LEFT JOIN renewed ON true;
