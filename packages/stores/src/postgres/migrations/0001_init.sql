-- Migration 0001: the records table, its retention index and the settle notifications.
-- Append-only: never edit a migration that has shipped; add 0002_*.sql instead.
-- Placeholders (replaced with quoted identifiers by the store, never with user values):
--   {{table}}                  schema-qualified records table
--   {{expires_index}}          index on expires_at (unqualified)
--   {{notify_function}}        schema-qualified trigger function
--   {{notify_update_trigger}}  trigger name (unqualified)
--   {{notify_delete_trigger}}  trigger name (unqualified)
--   {{channel}}                LISTEN/NOTIFY channel, as a string literal

CREATE TABLE {{table}} (
  tenant           text        NOT NULL,
  key              text        NOT NULL,
  tool             text        NOT NULL,
  fingerprint      text        NOT NULL,
  state            text        NOT NULL
                   CHECK (state IN ('in_progress', 'completed', 'indeterminate', 'abandoned')),
  fence            bigint      NOT NULL CHECK (fence >= 1),
  attempt          integer     NOT NULL CHECK (attempt >= 1),
  owner            text        NOT NULL,
  -- Start of the current attempt (database clock). A claim recognises its own attempt by
  -- owner + claimed_at = statement_timestamp() in RETURNING.
  claimed_at       timestamptz NOT NULL,
  lease_expires_at timestamptz NOT NULL,
  -- Retention deadline: past it the row is treated as absent and cleanup() deletes it.
  expires_at       timestamptz NOT NULL,
  -- Retention window of the current attempt, so renew() can move expires_at with the lease.
  retention_ms     bigint      NOT NULL CHECK (retention_ms >= 0),
  outcome          text,
  error_type       text,
  error_message    text,
  PRIMARY KEY (tenant, key)
) WITH (fillfactor = 80); -- room for HOT updates: a repeated claim rewrites the row in place

CREATE INDEX {{expires_index}} ON {{table}} (expires_at);

-- Wakes waitForSettle() when a record leaves in_progress or an in_progress record is deleted.
-- The payload names the record without revealing it: hex SHA-256 of tenant, NUL, key.
CREATE FUNCTION {{notify_function}}() RETURNS trigger LANGUAGE plpgsql AS $toolfence_notify$
BEGIN
  PERFORM pg_notify(
    {{channel}},
    encode(sha256(convert_to(OLD.tenant, 'UTF8') || '\x00'::bytea || convert_to(OLD.key, 'UTF8')), 'hex')
  );
  RETURN NULL;
END
$toolfence_notify$;

CREATE TRIGGER {{notify_update_trigger}}
  AFTER UPDATE ON {{table}}
  FOR EACH ROW
  WHEN (OLD.state = 'in_progress' AND NEW.state <> 'in_progress')
  EXECUTE FUNCTION {{notify_function}}();

CREATE TRIGGER {{notify_delete_trigger}}
  AFTER DELETE ON {{table}}
  FOR EACH ROW
  WHEN (OLD.state = 'in_progress')
  EXECUTE FUNCTION {{notify_function}}();
