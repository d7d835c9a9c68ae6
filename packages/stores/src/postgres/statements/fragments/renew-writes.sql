-- What renew.sql and renew-locked.sql write: the lease ($5 ms), and the retention deadline pushed
-- to at least lease + the claim's retention (and the sweep bound with it, 0008_hot_complete.sql).
  SET
    lease_expires_at = statement_timestamp() + $5::float8 * interval '1 millisecond',
    expires_at = greatest(
      record.expires_at,
      statement_timestamp() + ($5::float8 + record.retention_ms) * interval '1 millisecond'
    ),
    sweep_at = greatest(
      record.sweep_at,
      statement_timestamp() + ($5::float8 + record.retention_ms) * interval '1 millisecond'
    )
