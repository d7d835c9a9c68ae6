-- The start of list-newest.sql and list-oldest.sql: the columns of a listed record and the
-- filters of one page (@tenant, @now, @states, @expiredOnly, @tool, @olderThanMs as
-- list-newest.sql says), up to the cursor condition.
SELECT tenant, "key", tool, fingerprint, state, fence, attempt, owner,
       lease_expires_at_ms, expires_at_ms, retention_ms, NULL AS outcome, error_type, error_message,
       run_id, call_id, description, claimed_at_ms, updated_at_ms, resolution, codec, approval
FROM {{table}}
WHERE (@tenant IS NULL OR tenant = @tenant)
  AND expires_at_ms > @now
  AND state IN (SELECT value FROM json_each(@states))
  AND (@expiredOnly = 0 OR state <> 'in_progress' OR lease_expires_at_ms <= @now)
  AND (@tool IS NULL OR tool = @tool)
  AND (@olderThanMs IS NULL OR updated_at_ms <= @now - @olderThanMs)
