-- decide: an operator's decision on one call, with no expected request (decide-expected.sql has
-- one), in ONE statement (0010_approvals.sql; docs/store-contract.md, "Approvals").
-- $1 tenant, $2 key, $3 tool, $4 fingerprint, $5 approved, $6 by, $7 reason (NULL when absent),
-- $8 retention ms, $9 run id, $10 call id, $11 description, $12 codec (NULL when absent).
-- One row: the record as the statement left it. The upsert locks the row and decides on its
-- latest committed version, so a claim consuming the approval and a denial are serialised:
--   no live row: created in the decided state (owner '': no call asked yet);
--   another tool or fingerprint, a claimed state, a decision already recorded, or an approval
--   meeting a denial: rewritten with its own values (the store judges the answer from the row);
--   awaiting_approval, or approved being denied: the decided state and its audit.
WITH decided AS (
INSERT INTO {{table}} AS record (
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  claimed_at, lease_expires_at, expires_at, retention_ms, waited,
  run_id, call_id, description, updated_at, codec, sweep_at, approval
)
SELECT
  $1::text, $2::text, $3::text, $4::text,
  CASE WHEN $5::boolean THEN 'approved' ELSE 'denied' END, 0, 0, '',
  NULL, to_timestamp(0),
  statement_timestamp() + $8::float8 * interval '1 millisecond',
  $8::bigint, false,
  $9::text, $10::text, $11::text, date_trunc('milliseconds', statement_timestamp()), $12::text,
  statement_timestamp() + $8::float8 * interval '1 millisecond',
  jsonb_strip_nulls(jsonb_build_object(
    'approved', $5::boolean, 'by', $6::text, 'reason', $7::text,
    'atMs', floor(extract(epoch FROM statement_timestamp()) * 1000)
  ))
ON CONFLICT (tenant, key) DO UPDATE SET (
  tool, fingerprint, state, fence, attempt, owner, claimed_at, lease_expires_at,
  expires_at, retention_ms, outcome, outcome_bytes, error_type, error_message, waited,
  run_id, call_id, description, updated_at, resolution, codec, sweep_at, approval
) = (
  SELECT
    CASE WHEN decision.action = 'create' THEN excluded.tool ELSE record.tool END,
    CASE WHEN decision.action = 'create' THEN excluded.fingerprint ELSE record.fingerprint END,
    CASE WHEN decision.action IN ('create', 'write') THEN excluded.state ELSE record.state END,
    CASE WHEN decision.action = 'create' THEN 0 ELSE record.fence END,
    CASE WHEN decision.action = 'create' THEN 0 ELSE record.attempt END,
    CASE WHEN decision.action = 'create' THEN '' ELSE record.owner END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.claimed_at END,
    CASE WHEN decision.action = 'create' THEN to_timestamp(0) ELSE record.lease_expires_at END,
    CASE WHEN decision.action IN ('create', 'write') THEN excluded.expires_at ELSE record.expires_at END,
    CASE WHEN decision.action IN ('create', 'write') THEN excluded.retention_ms ELSE record.retention_ms END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.outcome END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.outcome_bytes END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.error_type END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.error_message END,
    CASE WHEN decision.action = 'create' THEN false ELSE record.waited END,
    CASE WHEN decision.action = 'create' THEN excluded.run_id ELSE record.run_id END,
    CASE WHEN decision.action = 'create' THEN excluded.call_id ELSE record.call_id END,
    CASE WHEN decision.action = 'create' THEN excluded.description ELSE record.description END,
    CASE WHEN decision.action IN ('create', 'write') THEN excluded.updated_at ELSE record.updated_at END,
    CASE WHEN decision.action = 'create' THEN NULL ELSE record.resolution END,
    CASE WHEN decision.action = 'create' THEN excluded.codec ELSE record.codec END,
    CASE WHEN decision.action IN ('create', 'write')
      THEN greatest(record.sweep_at, record.expires_at, excluded.sweep_at) ELSE record.sweep_at END,
    CASE WHEN decision.action IN ('create', 'write') THEN excluded.approval ELSE record.approval END
  FROM (
    SELECT CASE
      WHEN record.expires_at <= statement_timestamp() THEN 'create'
      WHEN record.tool <> excluded.tool OR record.fingerprint <> excluded.fingerprint THEN 'keep'
      WHEN record.state = 'awaiting_approval' THEN 'write'
      WHEN record.state = 'approved' AND NOT $5::boolean THEN 'write'
      ELSE 'keep'
    END AS action
  ) AS decision
)
RETURNING record.*
)
-- @include record-columns
  resolution,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM decided;
