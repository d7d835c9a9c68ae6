-- A record before its claim (approvals.ts): a call asking for an approval, or an operator's
-- decision on a call that has not asked yet. Fence 0, attempt 0, no lease, no claim time.
-- Replaces an expired row of the same key (the caller checked it, inside the same transaction).
-- The sweep bound is the retention deadline itself (0005_sweep_bound.sql).
INSERT OR REPLACE INTO {{table}}
  (tenant, "key", tool, fingerprint, state, fence, attempt, owner,
   lease_expires_at_ms, expires_at_ms, retention_ms, outcome, error_type, error_message,
   run_id, call_id, description, claimed_at_ms, updated_at_ms, resolution, codec, approval,
   sweep_at_ms)
VALUES (@tenant, @key, @tool, @fingerprint, @state, 0, 0, @owner,
        0, @expiresAtMs, @retentionMs, NULL, NULL, NULL,
        @runId, @callId, @description, NULL, @updatedAtMs, NULL, @codec, @approval, @expiresAtMs);
