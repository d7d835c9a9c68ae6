-- What complete.sql and complete-locked.sql write: the outcome, once ($5 text or $7 bytes),
-- no error, retention restarted ($6 ms). No indexed column changes when the complete comes inside
-- its lease (sweep_at already lies past the new expires_at), so the update is HOT (0008_hot_complete.sql).
  SET
    state = 'completed',
    outcome = $5,
    outcome_bytes = $7::bytea,
    error_type = NULL,
    error_message = NULL,
    expires_at = statement_timestamp() + $6::float8 * interval '1 millisecond',
    sweep_at = greatest(record.sweep_at, statement_timestamp() + $6::float8 * interval '1 millisecond'),
    updated_at = date_trunc('milliseconds', statement_timestamp())
