-- Deletes at most ? resolution entries past their retention deadline (by the index on
-- expires_at_ms, 0003_resolutions_expiry.sql). An entry is kept until then, also after a released
-- resolution deleted its record; cleanup() and each resolve delete the expired ones.
DELETE FROM {{resolutions_table}}
WHERE rowid IN (SELECT rowid FROM {{resolutions_table}} WHERE expires_at_ms <= ? LIMIT ?);
