-- cleanup: delete at most $1 rows past their retention deadline. Bounded, so it never holds
-- many row locks or writes a large transaction; SKIP LOCKED leaves rows a claimer is reviving
-- (or another cleanup is deleting) alone. The deadline is checked again on the row deleted.
DELETE FROM {{table}}
WHERE ctid = ANY (ARRAY(
  SELECT ctid FROM {{table}}
  WHERE expires_at <= statement_timestamp()
  LIMIT $1::integer
  FOR UPDATE SKIP LOCKED
))
AND expires_at <= statement_timestamp();
