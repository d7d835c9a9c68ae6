-- Migration 0002: NOTIFY only for records someone waits for.
-- Placeholders as in 0001_init.sql.
--
-- A transaction that NOTIFYs takes a database-wide lock from just before its commit until after
-- it (PostgreSQL serialises the notification queue that way), so every `complete` that notified
-- committed one after another, WAL flush included: first calls at concurrency 32 were bounded by
-- one flush at a time. Now a record is notified only when `waited` is set: by the waiter's first
-- read (read-lease.sql, before it trusts a later notification) or by a busy claimer on the
-- locked path (claim.sql). A waiter sets it, under the row lock, before it relies on a NOTIFY,
-- so a settle that commits after the mark always notifies and one that committed before it is
-- seen by the waiter's read.
--
-- Rows that exist when this runs, and rows inserted by a store that predates this column, get
-- the default `true`: they keep notifying on every settle, as before. This store writes `false`
-- into every record it creates.
ALTER TABLE {{table}} ADD COLUMN waited boolean NOT NULL DEFAULT true;

DROP TRIGGER {{notify_update_trigger}} ON {{table}};
DROP TRIGGER {{notify_delete_trigger}} ON {{table}};

CREATE TRIGGER {{notify_update_trigger}}
  AFTER UPDATE ON {{table}}
  FOR EACH ROW
  WHEN (OLD.state = 'in_progress' AND NEW.state <> 'in_progress' AND OLD.waited)
  EXECUTE FUNCTION {{notify_function}}();

CREATE TRIGGER {{notify_delete_trigger}}
  AFTER DELETE ON {{table}}
  FOR EACH ROW
  WHEN (OLD.state = 'in_progress' AND OLD.waited)
  EXECUTE FUNCTION {{notify_function}}();
