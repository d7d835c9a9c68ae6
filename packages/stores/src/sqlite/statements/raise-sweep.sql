-- Raises a record's sweep bound to its new retention deadline (a write that moved expires_at_ms
-- past it; 0005_sweep_bound.sql). Sent only then, so a complete inside its lease leaves the index alone.
UPDATE {{table}} SET sweep_at_ms = ? WHERE tenant = ? AND "key" = ?;
