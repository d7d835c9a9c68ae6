-- An operator's decision on a record before its claim (approvals.ts): its approval state and
-- audit, and a retention from the decision. The request's owner and ids stay.
UPDATE {{table}}
SET state = @state, fence = 0, attempt = 0, lease_expires_at_ms = 0, expires_at_ms = @expiresAtMs,
    retention_ms = @retentionMs, claimed_at_ms = NULL, updated_at_ms = @updatedAtMs,
    approval = @approval
WHERE tenant = @tenant AND "key" = @key;
