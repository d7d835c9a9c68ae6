-- list-newest: one page of live records by state, newest first (#20). Read-only.
-- $1 tenant (NULL: every tenant), $2 states (text[] of in_progress, indeterminate, abandoned,
-- completed), $3 true to take only in-progress records whose lease expired (lease_expired),
-- $4 tool (NULL: any), $5 olderThanMs (NULL: none), $6 cursor updated_at ms (NULL: from the
-- start), $7 cursor tenant, $8 cursor key, $9 limit.
-- updated_at holds whole milliseconds, so the cursor names a position exactly; tenant and key
-- order by code point (COLLATE "C"), as the partial listing indexes of 0004_listing.sql do.
SELECT
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms,
  error_type, error_message, run_id, call_id, description,
  floor(extract(epoch FROM claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
  resolution,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM {{table}}
WHERE ($1::text IS NULL OR tenant = $1::text)
  AND expires_at > statement_timestamp()
  AND state = ANY ($2::text[])
  AND (NOT $3::boolean OR state <> 'in_progress' OR lease_expires_at <= statement_timestamp())
  AND ($4::text IS NULL OR tool = $4::text)
  AND ($5::float8 IS NULL OR updated_at <= statement_timestamp() - $5::float8 * interval '1 millisecond')
  AND ($6::float8 IS NULL OR (updated_at, tenant COLLATE "C", key COLLATE "C") <
    (timestamptz 'epoch' + $6::float8 * interval '1 millisecond', $7::text, $8::text))
ORDER BY updated_at DESC, tenant COLLATE "C" DESC, key COLLATE "C" DESC
LIMIT $9::integer;
