-- Migration 0009: an index for the records an operator must look at, that a complete leaves
-- alone. Placeholders as in 0008_hot_complete.sql, and:
--   {{attention_index}}   partial index of the indeterminate and abandoned records (unqualified)
--
-- 0008 dropped the listing indexes (they named `state` and `updated_at`, which a complete
-- changes, so no complete was a HOT update); listing indeterminate or abandoned records across
-- tenants then read the whole table. This index names only `tenant`, `key` and, in its
-- predicate, `error_type`. Every statement that makes a record indeterminate or abandoned sets
-- `error_type` (the claim function's expired-lease branches, markIndeterminate); every statement
-- that starts or ends an attempt clears it (a fresh claim, a takeover, complete, a resolution).
-- A complete of a record in progress thus writes NULL over NULL and changes no indexed column:
-- it stays HOT. list-*-attention.sql read this index when only those states are asked for.
--
-- Online as 0008: built CONCURRENTLY on a large table (resumable; an interrupted build is
-- dropped and built again), plainly on a small one. A store of the previous version lists
-- without it, as before, and its writes keep the index up to date like any other.

-- The default of 0008 again, for a database that applied 0008 before it had one (catalog only).
ALTER TABLE {{table}} ALTER COLUMN sweep_at SET DEFAULT statement_timestamp();

-- @online index attention_index
CREATE INDEX CONCURRENTLY IF NOT EXISTS {{attention_index}} ON {{table}} (tenant, key)
  WHERE error_type IS NOT NULL;
