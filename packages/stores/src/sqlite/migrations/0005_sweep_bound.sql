-- Migration 0005: a first call touches two b-trees fewer. Each commit writes the pages of every
-- b-tree its statements changed: a claim entered the table, its primary key, the expires_at_ms
-- index and both listing indexes of 0002 (a record in progress is in their predicate), and a
-- complete moved the row in three of them again (bench/RESULTS.md: 45.7 % of a first call's
-- CPU was BEGIN/COMMIT writing those pages).
--
-- The sweep reads `sweep_at_ms`, an upper bound of `expires_at_ms`: a claim writes its own
-- deadline (lease + retention), and a write that would move `expires_at_ms` past it raises it
-- (backend.ts). A complete inside its lease lowers `expires_at_ms` and leaves the index alone. A
-- record past `expires_at_ms` is absent, as before; the sweep deletes it once `sweep_at_ms` has
-- passed too, at most one lease later. The listing reads the primary key (one tenant) or the
-- table (every tenant): the operator's rare path pays instead of every call.
--
-- A process of the previous version on the same file (during an upgrade) inserts rows without
-- `sweep_at_ms` (NULL) and does not raise it: the sweep takes NULL rows too and checks
-- `expires_at_ms` on each, so no live row is deleted.
ALTER TABLE {{table}} ADD COLUMN sweep_at_ms INTEGER;
UPDATE {{table}} SET sweep_at_ms = expires_at_ms;
CREATE INDEX {{sweep_index}} ON {{table}} (sweep_at_ms);
DROP INDEX IF EXISTS {{expires_index}};
DROP INDEX IF EXISTS {{list_tenant_index}};
DROP INDEX IF EXISTS {{list_all_index}};
