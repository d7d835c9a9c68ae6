-- cleanup: delete at most $1 rows past their retention deadline: expired records first, then, with
-- what is left of $1, expired resolution entries (0004_listing.sql: the journal keeps an entry
-- until its expires_at, also after its record is gone; nothing else deletes it). One row answers:
-- `deleted`, both counts together. Bounded, so it never holds many row locks or writes a large
-- transaction; SKIP LOCKED leaves rows a claimer is reviving (or another cleanup is deleting)
-- alone. Records are found by sweep_at, the indexed upper bound of expires_at (0008_hot_complete.sql);
-- the deadline itself is checked on each, and again on the record deleted (a claim may have revived it).
WITH records AS (
  DELETE FROM {{table}}
  WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM {{table}}
    WHERE sweep_at <= statement_timestamp() AND expires_at <= statement_timestamp()
    LIMIT $1::integer
    FOR UPDATE SKIP LOCKED
  ))
  AND expires_at <= statement_timestamp()
  RETURNING 1
), entries AS (
  -- An entry is never updated, so its ctid is stable; it is deleted only here and by forget.
  DELETE FROM {{resolutions_table}}
  WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM {{resolutions_table}}
    WHERE expires_at <= statement_timestamp()
    LIMIT greatest($1::integer - (SELECT count(*) FROM records), 0)
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING 1
)
SELECT ((SELECT count(*) FROM records) + (SELECT count(*) FROM entries))::integer AS deleted;
