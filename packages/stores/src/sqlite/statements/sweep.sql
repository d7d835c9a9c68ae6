-- Deletes at most ? rows past their retention deadline (by the index on expires_at_ms).
DELETE FROM {{table}}
WHERE rowid IN (SELECT rowid FROM {{table}} WHERE expires_at_ms <= ? LIMIT ?);
