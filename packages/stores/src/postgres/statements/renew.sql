-- renew: extend the lease if the holder ($3 fence, $4 owner) is current and in progress.
-- $1 tenant, $2 key, $3 fence, $4 owner, $5 lease ms.
-- Returns no row when the record is absent (or past retention); otherwise one row with the
-- record as the statement's snapshot shows it (state, fence, owner), renewed_lease_ms (NULL when
-- nothing changed) and `ambiguous`.
--
-- `renewed` locks and changes the row only if it matches the holder; `seen` is a plain read (no
-- lock, no WAL for a refused holder). Exact as fragments/row-seen.sql explains; `ambiguous` (the
-- snapshot shows the holder current, yet nothing was renewed: a concurrent writer changed the row
-- first) → the store sends renew-locked.sql, which answers from the newest version.
WITH renewed AS (
  UPDATE {{table}} AS record
-- @include renew-writes
  WHERE record.tenant = $1 AND record.key = $2 AND record.expires_at > statement_timestamp()
    AND record.state = 'in_progress' AND record.fence = $3::bigint AND record.owner = $4
  RETURNING floor(extract(epoch FROM record.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms
), seen AS (
  SELECT state, fence, owner
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
)
SELECT seen.state, seen.fence, seen.owner, renewed.lease_expires_at_ms AS renewed_lease_ms,
  renewed.lease_expires_at_ms IS NULL
    AND seen.state = 'in_progress' AND seen.fence = $3::bigint AND seen.owner = $4 AS ambiguous
FROM seen LEFT JOIN renewed ON true;
