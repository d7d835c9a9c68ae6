-- Deletes at most ? rows past their retention deadline. Found by the index on sweep_at_ms, an
-- upper bound of expires_at_ms (NULL on a row a store of the previous version inserted), and
-- each checked against expires_at_ms itself (0005_sweep_bound.sql). Values: now (ms) twice, limit.
DELETE FROM {{table}}
WHERE rowid IN (
  SELECT rowid FROM {{table}}
  WHERE (sweep_at_ms <= ? OR sweep_at_ms IS NULL) AND expires_at_ms <= ?
  LIMIT ?
);
