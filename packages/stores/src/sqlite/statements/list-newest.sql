-- One page of live records by state, newest first. Read-only.
-- @tenant (NULL: every tenant), @now (ms), @states (JSON array of stored states), @expiredOnly (1
-- to take only in-progress records whose lease expired), @tool (NULL: any), @olderThanMs (NULL:
-- none), @cursorUpdatedAtMs (NULL: from the start), @cursorTenant, @cursorKey, @limit.
-- @include list-page
  AND (@cursorUpdatedAtMs IS NULL OR (updated_at_ms, tenant, "key") < (@cursorUpdatedAtMs, @cursorTenant, @cursorKey))
ORDER BY updated_at_ms DESC, tenant DESC, "key" DESC
LIMIT @limit;
