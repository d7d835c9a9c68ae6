-- [#20 listing] One page of live records by state, newest first. Read-only.
-- @tenant (NULL: every tenant), @now (ms), @states (JSON array of stored states), @expiredOnly (1
-- to take only in-progress records whose lease expired), @tool (NULL: any), @olderThanMs (NULL:
-- none), @cursorUpdatedAtMs (NULL: from the start), @cursorTenant, @cursorKey, @limit.
SELECT tenant, "key", tool, fingerprint, state, fence, attempt, owner,
       lease_expires_at_ms, expires_at_ms, retention_ms, NULL AS outcome, error_type, error_message,
       run_id, call_id, description, claimed_at_ms, updated_at_ms, resolution
FROM {{table}}
WHERE (@tenant IS NULL OR tenant = @tenant)
  AND expires_at_ms > @now
  AND state IN (SELECT value FROM json_each(@states))
  AND (@expiredOnly = 0 OR state <> 'in_progress' OR lease_expires_at_ms <= @now)
  AND (@tool IS NULL OR tool = @tool)
  AND (@olderThanMs IS NULL OR updated_at_ms <= @now - @olderThanMs)
  AND (@cursorUpdatedAtMs IS NULL OR (updated_at_ms, tenant, "key") < (@cursorUpdatedAtMs, @cursorTenant, @cursorKey))
ORDER BY updated_at_ms DESC, tenant DESC, "key" DESC
LIMIT @limit;
