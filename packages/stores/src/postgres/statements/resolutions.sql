-- resolutions: the resolution entries of one key, newest first, while they last.
-- $1 tenant, $2 key.
SELECT
  tenant, key, tool, action, from_state, fence, attempt, error_type, error_message,
  resolved_by, reason, floor(extract(epoch FROM resolved_at) * 1000)::float8 AS resolved_at_ms, forced
FROM {{resolutions_table}}
WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
ORDER BY resolved_at DESC;
