-- One record by its primary key, expired or not (the caller judges expiry on its clock).
SELECT tenant, "key", tool, fingerprint, state, fence, attempt, owner,
       lease_expires_at_ms, expires_at_ms, retention_ms, outcome, error_type, error_message,
       run_id, call_id, description, claimed_at_ms, updated_at_ms, resolution, codec, approval,
       sweep_at_ms
FROM {{table}}
WHERE tenant = ? AND "key" = ?;
