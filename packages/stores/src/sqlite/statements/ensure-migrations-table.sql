-- The ledger of applied migrations (run by ensureSchema() inside its BEGIN IMMEDIATE).
CREATE TABLE IF NOT EXISTS {{migrations_table}} (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at_ms INTEGER NOT NULL
);
