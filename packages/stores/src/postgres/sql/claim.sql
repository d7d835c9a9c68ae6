-- claim: decide ownership of one key in ONE statement.
-- $1 tenant, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease ms, $7 retention ms,
-- $8 mode ('at-least-once' | 'at-most-once'), $9 max attempts, $10 check fingerprint.
-- Returns exactly one row: the record as it stands after this statement, the database clock,
-- and `acquired` (true when the caller is the holder: this statement made it so, or the caller's
-- own earlier claim did and this is the same request resent; owners are unique per attempt).
--
-- Why one INSERT ... ON CONFLICT DO UPDATE with no WHERE: the DO UPDATE always locks the row
-- and evaluates against its LATEST committed version (not the statement's snapshot), so
-- concurrent claimers are serialised by the row lock and each sees what the previous one wrote.
-- When nothing should change, the row is rewritten with its own values (a HOT update) so that
-- RETURNING still yields it. "DO NOTHING, then SELECT" would read an older snapshot instead.
--
-- Clock: statement_timestamp() — one value for the whole statement (the decision and the
-- deadlines it writes agree) and, unlike now(), not frozen by a caller's open transaction.
INSERT INTO {{table}} AS record (
  tenant, key, tool, fingerprint, state, fence, attempt, owner,
  claimed_at, lease_expires_at, expires_at, retention_ms
)
VALUES (
  $1, $2, $3, $4, 'in_progress', 1, 1, $5,
  statement_timestamp(),
  statement_timestamp() + $6::float8 * interval '1 millisecond',
  statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond',
  $7::bigint
)
ON CONFLICT (tenant, key) DO UPDATE SET (
  tool, fingerprint, state, fence, attempt, owner,
  claimed_at, lease_expires_at, expires_at, retention_ms,
  outcome, error_type, error_message
) = (
  SELECT
    CASE WHEN decision.action = 'fresh' THEN excluded.tool ELSE record.tool END,
    CASE WHEN decision.action = 'fresh' THEN excluded.fingerprint ELSE record.fingerprint END,
    CASE decision.action
      WHEN 'fresh' THEN 'in_progress'
      WHEN 'takeover' THEN 'in_progress'
      WHEN 'abandon' THEN 'abandoned'
      WHEN 'indeterminate' THEN 'indeterminate'
      ELSE record.state
    END,
    CASE decision.action WHEN 'fresh' THEN 1 WHEN 'takeover' THEN record.fence + 1 ELSE record.fence END,
    CASE decision.action WHEN 'fresh' THEN 1 WHEN 'takeover' THEN record.attempt + 1 ELSE record.attempt END,
    CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.owner ELSE record.owner END,
    CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.claimed_at ELSE record.claimed_at END,
    CASE
      WHEN decision.action IN ('fresh', 'takeover') THEN excluded.lease_expires_at
      WHEN decision.action = 'resend' THEN greatest(record.lease_expires_at, excluded.lease_expires_at)
      ELSE record.lease_expires_at
    END,
    CASE
      WHEN decision.action IN ('fresh', 'takeover') THEN excluded.expires_at
      WHEN decision.action = 'resend' THEN greatest(record.expires_at, excluded.expires_at)
      WHEN decision.action IN ('abandon', 'indeterminate')
        THEN statement_timestamp() + $7::float8 * interval '1 millisecond'
      ELSE record.expires_at
    END,
    CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.retention_ms ELSE record.retention_ms END,
    CASE WHEN decision.action = 'fresh' THEN NULL ELSE record.outcome END,
    CASE decision.action
      WHEN 'fresh' THEN NULL
      WHEN 'takeover' THEN NULL
      WHEN 'abandon' THEN 'LeaseExpired'
      WHEN 'indeterminate' THEN 'LeaseExpired'
      ELSE record.error_type
    END,
    CASE decision.action
      WHEN 'fresh' THEN NULL
      WHEN 'takeover' THEN NULL
      WHEN 'abandon' THEN 'the lease of attempt ' || record.attempt || ' expired and ' || $9::integer
        || ' attempt(s) were lost'
      WHEN 'indeterminate' THEN 'the lease of attempt ' || record.attempt
        || ' expired before its outcome was recorded; the effect may have happened'
      ELSE record.error_message
    END
  FROM (
    SELECT CASE
      -- Past retention: the row is treated as absent and replaced.
      WHEN record.expires_at <= statement_timestamp() THEN 'fresh'
      -- Another tool, or other arguments when they must match: report, change nothing.
      WHEN record.tool <> excluded.tool
        OR ($10::boolean AND record.fingerprint <> excluded.fingerprint) THEN 'keep'
      -- The holder itself asking again (a request resent after its reply was lost): answer as the
      -- first time, with the lease restarted (the claimer never got the first answer).
      WHEN record.state = 'in_progress' AND record.owner = excluded.owner THEN 'resend'
      -- Settled, or held under a live lease.
      WHEN record.state <> 'in_progress' OR record.lease_expires_at > statement_timestamp() THEN 'keep'
      -- The holder's lease expired.
      WHEN $8::text = 'at-most-once' THEN 'indeterminate'
      WHEN record.attempt >= $9::integer THEN 'abandon'
      ELSE 'takeover'
    END AS action
  ) AS decision
)
RETURNING
  record.tenant, record.key, record.tool, record.fingerprint, record.state,
  record.fence, record.attempt, record.owner,
  floor(extract(epoch FROM record.lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM record.expires_at) * 1000)::float8 AS expires_at_ms,
  record.outcome, record.error_type, record.error_message,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  (record.owner = $5 AND record.state = 'in_progress') AS acquired;
