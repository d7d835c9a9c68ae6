-- Migration 0006: an operator may resolve a record in progress: one whose holder's
-- lease expired (the holder is gone), or, forced with a reason, one whose lease is live. The
-- journal keeps `in_progress` as a from_state and says whether the resolution was forced.
-- Placeholders as in 0004_listing.sql, and:
--   {{resolutions_table_literal}}      the journal's qualified name as a string literal
--   {{resolutions_from_state_check}}   the new CHECK constraint on from_state (unqualified)
--
-- The CHECK of 0004 was named by PostgreSQL (a name it may have truncated): found by its column.
DO $migration_0006$
DECLARE
  constraint_name text;
BEGIN
  FOR constraint_name IN
    SELECT conname FROM pg_constraint
    WHERE conrelid = {{resolutions_table_literal}}::regclass AND contype = 'c'
      AND pg_get_constraintdef(oid) LIKE '%from_state%'
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', {{resolutions_table_literal}}::regclass, constraint_name);
  END LOOP;
END
$migration_0006$;
ALTER TABLE {{resolutions_table}}
  ADD CONSTRAINT {{resolutions_from_state_check}}
    CHECK (from_state IN ('indeterminate', 'abandoned', 'in_progress')),
  ADD COLUMN forced boolean NOT NULL DEFAULT false;
