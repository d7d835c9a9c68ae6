-- The live resolution entries of one key, newest first. @tenant, @key, @now (ms).
SELECT tenant, "key", tool, action, from_state, fence, attempt, error_type, error_message,
       resolved_by, reason, resolved_at_ms, forced
FROM {{resolutions_table}}
WHERE tenant = @tenant AND "key" = @key AND expires_at_ms > @now
ORDER BY resolved_at_ms DESC, rowid DESC;
