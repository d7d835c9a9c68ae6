-- What complete.sql and complete-locked.sql write: the outcome, once ($5 text or $7 bytes),
-- no error, retention restarted ($6 ms).
  SET
    state = 'completed',
    outcome = $5,
    outcome_bytes = $7::bytea,
    error_type = NULL,
    error_message = NULL,
    expires_at = statement_timestamp() + $6::float8 * interval '1 millisecond',
    updated_at = date_trunc('milliseconds', statement_timestamp())
