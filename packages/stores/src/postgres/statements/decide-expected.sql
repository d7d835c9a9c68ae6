-- decide-expected: an operator's decision on the request of one call ($9 its owner, the
-- `awaiting_approval` record the operator looked at), in ONE statement; $1..$8 as decide.sql
-- (the operator fields are the request's already). It never creates a record: no live row answers no row. The row is locked
-- (fragments/lock-current.sql) and changed only when it is this call's request, with the owner
-- expected, and the decision changes it (awaiting_approval, or approved being denied). The row
-- is the record as the statement left it; the store judges the answer from it.
-- @include lock-current
, change AS (
  UPDATE {{table}} AS record
  SET
    state = CASE WHEN $5::boolean THEN 'approved' ELSE 'denied' END,
    approval = jsonb_strip_nulls(jsonb_build_object(
      'approved', $5::boolean, 'by', $6::text, 'reason', $7::text,
      'atMs', floor(extract(epoch FROM statement_timestamp()) * 1000)
    )),
    retention_ms = $8::bigint,
    expires_at = statement_timestamp() + $8::float8 * interval '1 millisecond',
    sweep_at = greatest(record.sweep_at, statement_timestamp() + $8::float8 * interval '1 millisecond'),
    updated_at = date_trunc('milliseconds', statement_timestamp())
  FROM current
  WHERE record.tenant = current.tenant AND record.key = current.key
    AND current.tool = $3::text AND current.fingerprint = $4::text AND current.owner = $9::text
    AND (current.state = 'awaiting_approval' OR (current.state = 'approved' AND NOT $5::boolean))
  RETURNING record.*
), after AS (
  SELECT * FROM change
  UNION ALL
  SELECT * FROM current WHERE NOT EXISTS (SELECT 1 FROM change)
)
SELECT
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM expires_at) * 1000)::float8 AS expires_at_ms, retention_ms,
  outcome, outcome_bytes, error_type, error_message,
  run_id, call_id, description, codec,
  floor(extract(epoch FROM claimed_at) * 1000)::float8 AS claimed_at_ms,
  floor(extract(epoch FROM updated_at) * 1000)::float8 AS updated_at_ms,
  approval, resolution
FROM after;
