-- The middle of resolve-completed.sql and resolve-released.sql: ends the `change` CTE (it takes
-- the record only in a state an operator may resolve, and only when it has the holder the
-- statement's `expected` CTE names) and opens the `journal` CTE, which keeps the
-- resolution entry in {{resolutions_table}} (0004_listing.sql). The statement writes the SELECT
-- of the entry's values, then includes resolve-journal-close.
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.state IN ('indeterminate', 'abandoned') AND EXISTS (SELECT 1 FROM expected)
  RETURNING 1
), journal AS (
  INSERT INTO {{resolutions_table}} (
    tenant, key, tool, action, from_state, fence, attempt, error_type, error_message,
    resolved_by, reason, resolved_at, expires_at
  )
