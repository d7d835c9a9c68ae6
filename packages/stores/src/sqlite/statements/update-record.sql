-- Writes the decided state of a record (every field that a decision can change but the sweep
-- bound, which backend.ts raises with raise-sweep.sql only when the deadline passes it).
UPDATE {{table}}
SET state = ?, fence = ?, attempt = ?, owner = ?, lease_expires_at_ms = ?, expires_at_ms = ?,
    retention_ms = ?, outcome = ?, error_type = ?, error_message = ?,
    run_id = ?, call_id = ?, description = ?, claimed_at_ms = ?, updated_at_ms = ?, resolution = ?
WHERE tenant = ? AND "key" = ?;
