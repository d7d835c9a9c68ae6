-- list-newest: one page of live records by state, newest first. Read-only.
-- $1 tenant (NULL: every tenant), $2 states (text[] of in_progress, indeterminate, abandoned,
-- completed), $3 true to take only in-progress records whose lease expired (lease_expired),
-- $4 tool (NULL: any), $5 olderThanMs (NULL: none), $6 cursor updated_at ms (NULL: from the
-- start), $7 cursor tenant, $8 cursor key, $9 limit.
-- updated_at holds whole milliseconds, so the cursor names a position exactly; tenant and key
-- order by code point (COLLATE "C"). No index serves this order (0008_hot_complete.sql): one
-- tenant's live rows are read by the primary key and sorted, every tenant's by a scan.
-- A page of indeterminate and abandoned records only is list-newest-attention.sql (an index).
-- @include list-page
  AND ($6::float8 IS NULL OR (updated_at, tenant COLLATE "C", key COLLATE "C") <
    (timestamptz 'epoch' + $6::float8 * interval '1 millisecond', $7::text, $8::text))
ORDER BY updated_at DESC, tenant COLLATE "C" DESC, key COLLATE "C" DESC
LIMIT $9::integer;
