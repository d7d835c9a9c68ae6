-- What mark-indeterminate.sql and mark-indeterminate-locked.sql write: the state, the error
-- ($5 type, $6 message), retention restarted ($7 ms).
  SET
    state = 'indeterminate',
    error_type = $5,
    error_message = $6,
    expires_at = statement_timestamp() + $7::float8 * interval '1 millisecond',
    sweep_at = greatest(record.sweep_at, statement_timestamp() + $7::float8 * interval '1 millisecond'),
    updated_at = date_trunc('milliseconds', statement_timestamp())
