-- Ends a holder-matching statement (complete.sql, release.sql, mark-indeterminate.sql; renew.sql
-- writes the same shape for its columns). The statement's `change` CTE changes the row only where
-- it matches the holder, and its `seen` CTE is a plain read of the live row of ($1 tenant, $2 key)
-- with `matched` (the change's holder condition on that version). Why, and why this is exact:
--
-- * No lock, no WAL for a holder that does not match. The UPDATE/DELETE tests its WHERE on the
--   version in the statement's snapshot and skips a row that fails it without locking it; a plain
--   read takes no row lock either. (Row locks are WAL-logged, and a statement that locked a row
--   holds the lock through its commit's WAL flush: with SELECT ... FOR UPDATE, refused holders
--   queued on one row one fsync each, bench/RESULTS.md "The PostgreSQL test flake".)
-- * A matching holder takes the row lock as before: under READ COMMITTED an UPDATE/DELETE that
--   found its row locked or changed waits, then re-checks its whole WHERE on the newest committed
--   version (EvalPlanQual), so the change is decided on what concurrent callers wrote.
-- * Every CTE of one statement reads the same snapshot, taken when the statement starts. When the
--   change ran, its row was in that snapshot and matched there (the re-check is only on top of
--   that), so `seen` has the row. When nothing matched in the snapshot, the holder was not current
--   at that instant, which lies inside the call: the answer (`stale` with that version, `settled`,
--   `not_found`) is linearizable there.
-- * The one case `seen` cannot answer: `matched` (the snapshot shows the holder current) but no
--   change — the change waited for a concurrent writer and its re-check on the newer version
--   failed (the row was taken over, settled or deleted meanwhile). `seen` still shows the older
--   version, which would wrongly look current, and the newest one is not readable in this
--   statement. The statement answers `ambiguous` and the store sends the locking statement
--   (<name>-locked.sql), which reads the newest version under FOR UPDATE: two round trips on a
--   path that needs a concurrent writer between the snapshot and the lock.
--   (Why not a PL/pgSQL function whose second statement reads a fresh snapshot: it would need a
--   migration and an upgraded-schema path for a case this rare; see docs/postgres.md.)
SELECT
  EXISTS (SELECT 1 FROM change) AS changed,
  seen.matched AND NOT EXISTS (SELECT 1 FROM change) AS ambiguous,
  seen.tenant, seen.key, seen.tool, seen.fingerprint, seen.state,
  seen.fence, seen.attempt, seen.owner,
  floor(extract(epoch FROM seen.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM seen.expires_at) * 1000)::float8 AS expires_at_ms, seen.retention_ms,
  seen.outcome, seen.outcome_bytes, seen.error_type, seen.error_message,
  seen.run_id, seen.call_id, seen.description, seen.codec,
  floor(extract(epoch FROM seen.claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM seen.updated_at) * 1000)::float8 AS updated_at_ms,
  seen.resolution, seen.approval
FROM seen;
