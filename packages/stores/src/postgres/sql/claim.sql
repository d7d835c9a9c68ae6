-- claim: decide ownership of one key in ONE statement.
-- $1 tenant, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease ms, $7 retention ms,
-- $8 mode ('at-least-once' | 'at-most-once'), $9 max attempts, $10 check fingerprint,
-- $11 run id, $12 call id, $13 description (NULL when absent): kept for operators.
-- Returns exactly one row: the record as it stands after this statement, the database clock,
-- and `acquired` (true when the caller is the holder: this statement made it so, or the caller's
-- own earlier claim did and this is the same request resent; owners are unique per attempt).
--
-- Two paths, chosen inside the statement:
--
-- `answered` (read-only: no row lock, no WAL, no commit flush): a live row whose answer needs no
-- change: a conflict (other tool, or other arguments when they must match), a settled record
-- (completed, indeterminate, abandoned), or one held by another owner under a live lease (busy).
-- It is read from the statement's snapshot, i.e. the latest version committed when the
-- statement started, so the answer was true at that instant, which lies inside the call: a
-- settled record only changes by resolve, by a late complete of its own holder, by forget or by
-- expiry, each a later instant than the one answered for; a busy answer only sends the caller
-- to waitForSettle, which re-reads. Conflict is judged first, as on the write path.
--
-- `upserted`, run only when `answered` is empty (no live row in the snapshot, the holder resending,
-- an expired lease, or a row that a concurrent claimer inserts or changes right now):
-- INSERT ... ON CONFLICT DO UPDATE with no WHERE. The DO UPDATE always locks the row and
-- evaluates against its LATEST committed version (not the statement's snapshot), so concurrent
-- claimers are serialised by the row lock and each sees what the previous one wrote. When
-- nothing should change (the row became settled or busy between the snapshot and the lock), the
-- row is rewritten with its own values so that RETURNING still yields it. "DO NOTHING, then
-- SELECT" would read an older snapshot instead. A busy claimer on this path marks the row
-- `waited` (it is about to wait); see 0002_notify_waited.sql.
--
-- Clock: statement_timestamp() — one value for the whole statement (the decision and the
-- deadlines it writes agree) and, unlike now(), not frozen by a caller's open transaction.
WITH answered AS (
  SELECT record.*
  FROM {{table}} AS record
  WHERE record.tenant = $1::text AND record.key = $2::text
    AND record.expires_at > statement_timestamp()
    AND (
      record.tool <> $3::text
      OR ($10::boolean AND record.fingerprint <> $4::text)
      OR record.state <> 'in_progress'
      OR (record.owner <> $5::text AND record.lease_expires_at > statement_timestamp())
    )
), upserted AS (
  INSERT INTO {{table}} AS record (
    tenant, key, tool, fingerprint, state, fence, attempt, owner,
    claimed_at, lease_expires_at, expires_at, retention_ms, waited,
    run_id, call_id, description, updated_at
  )
  SELECT
    $1::text, $2::text, $3::text, $4::text, 'in_progress', 1, 1, $5::text,
    statement_timestamp(),
    statement_timestamp() + $6::float8 * interval '1 millisecond',
    statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond',
    $7::bigint,
    false,
    $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp())
  WHERE NOT EXISTS (SELECT 1 FROM answered)
  ON CONFLICT (tenant, key) DO UPDATE SET (
    tool, fingerprint, state, fence, attempt, owner,
    claimed_at, lease_expires_at, expires_at, retention_ms,
    outcome, outcome_bytes, error_type, error_message, waited,
    run_id, call_id, description, updated_at, resolution
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
      CASE WHEN decision.action = 'fresh' THEN NULL ELSE record.outcome_bytes END,
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
      END,
      -- A new record has no waiter yet; a busy claimer is about to wait; otherwise unchanged
      -- (waiters of an attempt that is taken over keep waiting for the record).
      CASE decision.action WHEN 'fresh' THEN false WHEN 'busy' THEN true ELSE record.waited END,
      -- the new attempt's ids; updated_at when the state is entered anew
      CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.run_id ELSE record.run_id END,
      CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.call_id ELSE record.call_id END,
      CASE WHEN decision.action IN ('fresh', 'takeover') THEN excluded.description ELSE record.description END,
      CASE WHEN decision.action IN ('fresh', 'takeover', 'abandon', 'indeterminate')
        THEN date_trunc('milliseconds', statement_timestamp()) ELSE record.updated_at END,
      CASE WHEN decision.action = 'fresh' THEN NULL ELSE record.resolution END
    FROM (
      SELECT CASE
        -- Past retention: the row is treated as absent and replaced.
        WHEN record.expires_at <= statement_timestamp() THEN 'fresh'
        -- Another tool, or other arguments when they must match: report, change nothing.
        WHEN record.tool <> excluded.tool
          OR ($10::boolean AND record.fingerprint <> excluded.fingerprint) THEN 'keep'
        -- The holder itself asking again (a request resent after its reply was lost): answer as
        -- the first time, with the lease restarted (the claimer never got the first answer).
        WHEN record.state = 'in_progress' AND record.owner = excluded.owner THEN 'resend'
        -- Settled.
        WHEN record.state <> 'in_progress' THEN 'keep'
        -- Held under a live lease.
        WHEN record.lease_expires_at > statement_timestamp() THEN 'busy'
        -- The holder's lease expired.
        WHEN $8::text = 'at-most-once' THEN 'indeterminate'
        WHEN record.attempt >= $9::integer THEN 'abandon'
        ELSE 'takeover'
      END AS action
    ) AS decision
  )
  RETURNING
    record.tenant, record.key, record.tool, record.fingerprint, record.state,
    record.fence, record.attempt, record.owner, record.lease_expires_at, record.expires_at,
    record.outcome, record.outcome_bytes, record.error_type, record.error_message,
    record.run_id, record.call_id, record.description, record.claimed_at, record.updated_at,
    record.resolution
), decided AS (
  SELECT tenant, key, tool, fingerprint, state, fence, attempt, owner, lease_expires_at, expires_at,
    outcome, outcome_bytes, error_type, error_message,
    run_id, call_id, description, claimed_at, updated_at, resolution
  FROM upserted
  UNION ALL
  SELECT tenant, key, tool, fingerprint, state, fence, attempt, owner, lease_expires_at, expires_at,
    outcome, outcome_bytes, error_type, error_message,
    run_id, call_id, description, claimed_at, updated_at, resolution
  FROM answered
)
-- @include record-columns
  resolution,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  (owner = $5::text AND state = 'in_progress') AS acquired
FROM decided;
