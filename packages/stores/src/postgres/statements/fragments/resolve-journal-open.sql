-- The middle of resolve-completed.sql and resolve-released.sql: ends the `change` CTE (it takes
-- the record only when the statement's `resolvable` CTE has a row: the holder its `expected` CTE
-- names, in a state an operator may resolve) and opens the `journal` CTE, which keeps the
-- resolution entry in {{resolutions_table}} (0004_listing.sql). The statement writes the SELECT
-- of the entry's values, then includes resolve-journal-close.
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND EXISTS (SELECT 1 FROM resolvable)
  RETURNING 1
), journal AS (
  INSERT INTO {{resolutions_table}} (
    tenant, key, tool, action, from_state, fence, attempt, error_type, error_message,
    resolved_by, reason, resolved_at, expires_at, forced
  )
