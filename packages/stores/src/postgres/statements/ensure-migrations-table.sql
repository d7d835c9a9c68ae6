-- ensure-migrations-table: the ledger of applied migrations, one per records table.
-- Run by ensureSchema() inside its transaction, after it holds the advisory lock.
CREATE TABLE IF NOT EXISTS {{migrations_table}} (
  version    integer     PRIMARY KEY,
  name       text        NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
