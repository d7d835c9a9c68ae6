-- The start of list-newest.sql and list-oldest.sql: the columns of a listed record and the
-- filters of one page ($1..$5 as list-newest.sql says), up to the cursor condition.
SELECT
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms, retention_ms,
  error_type, error_message, run_id, call_id, description, codec,
  floor(extract(epoch FROM claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
  resolution, approval,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM {{table}}
WHERE ($1::text IS NULL OR tenant = $1::text)
  AND expires_at > statement_timestamp()
  AND state = ANY ($2::text[])
  AND (NOT $3::boolean OR state <> 'in_progress' OR lease_expires_at <= statement_timestamp())
  AND ($4::text IS NULL OR tool = $4::text)
  AND ($5::float8 IS NULL OR updated_at <= statement_timestamp() - $5::float8 * interval '1 millisecond')
