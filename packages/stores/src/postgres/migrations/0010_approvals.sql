-- Migration 0009: approvals (docs/approvals.md). A call that needs an operator's approval has a
-- life before its claim: `awaiting_approval`, `approved` or `denied`, at fence 0 and attempt 0
-- (so no holder's write, fence >= 1, ever matches it), with no claimed_at (no attempt yet) and the
-- operator's decision in `approval` (jsonb: approved, by, reason, atMs). The claim function gains
-- a 15th argument (the call needs an approval) and consumes an `approved` row in the same upsert
-- that decides every other claim. Placeholders as in 0005_claim_function.sql and 0006, and:
--   {{state_check}} {{fence_check}} {{attempt_check}}   the relaxed CHECKs (unqualified)
--
-- `approval` is not indexed and no index names the columns this changes, so a complete stays a
-- HOT update (0008_hot_complete.sql).
--
-- The CHECKs of 0001 were named by PostgreSQL: found by their column, as 0006 does. The new ones
-- are implied by the old ones, so they are added NOT VALID (no scan under the table lock) and
-- validated online. Every statement here can run again after an interruption.
--
-- Rolling upgrade: the 14-argument function (the previous store's) now calls this one with no
-- approval required, so a previous store claims as before. It cannot read the approval states:
-- do not use approvals until every store of the table runs this version.
DO $migration_0009$
DECLARE
  constraint_name text;
BEGIN
  FOR constraint_name IN
    SELECT conname FROM pg_constraint
    WHERE conrelid = {{table_literal}}::regclass AND contype = 'c'
      AND (pg_get_constraintdef(oid) LIKE '%state%'
        OR pg_get_constraintdef(oid) LIKE '%fence%'
        OR pg_get_constraintdef(oid) LIKE '%attempt%')
  LOOP
    EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', {{table_literal}}::regclass, constraint_name);
  END LOOP;
END
$migration_0009$;
ALTER TABLE {{table}}
  ADD CONSTRAINT {{state_check}} CHECK (state IN (
    'in_progress', 'completed', 'indeterminate', 'abandoned', 'awaiting_approval', 'approved', 'denied'
  )) NOT VALID,
  ADD CONSTRAINT {{fence_check}} CHECK (fence >= 0) NOT VALID,
  ADD CONSTRAINT {{attempt_check}} CHECK (attempt >= 0) NOT VALID,
  ALTER COLUMN claimed_at DROP NOT NULL,
  ADD COLUMN IF NOT EXISTS approval jsonb;

-- $15: the call needs an approval (ClaimOptions.approval = 'required'). The rest as in 0008.
CREATE OR REPLACE FUNCTION {{claim_function}}(
  text, text, text, text, text, float8, float8, text, integer, boolean, text, text, text, text, boolean
) RETURNS SETOF {{table}} LANGUAGE plpgsql AS $toolfence_claim$
BEGIN
  -- The read answers what needs no change: a conflict (an approval binds the arguments, whatever
  -- $10 says), a settled record, awaiting_approval or denied, or a live holder. Never `approved`:
  -- consuming it is a write, decided under the upsert's row lock.
  RETURN QUERY
  SELECT record.*
  FROM {{table}} AS record
  WHERE record.tenant = $1 AND record.key = $2
    AND record.expires_at > statement_timestamp()
    AND (
      record.tool <> $3
      OR (($10 OR $15 OR record.state IN ('awaiting_approval', 'approved', 'denied'))
        AND record.fingerprint <> $4)
      OR record.state NOT IN ('in_progress', 'approved')
      OR (record.owner <> $5 AND record.lease_expires_at > statement_timestamp())
    );
  IF FOUND THEN
    RETURN;
  END IF;
  -- A key without a row: a plain insert, of `awaiting_approval` when the call needs an approval
  -- (fence and attempt 0, no lease, no claimed_at, kept for the retention).
  RETURN QUERY
    INSERT INTO {{table}} AS record (
      tenant, key, tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms, waited,
      run_id, call_id, description, updated_at, codec, sweep_at
    )
    SELECT
      $1, $2, $3, $4,
      CASE WHEN $15 THEN 'awaiting_approval' ELSE 'in_progress' END,
      CASE WHEN $15 THEN 0 ELSE 1 END, CASE WHEN $15 THEN 0 ELSE 1 END, $5,
      CASE WHEN $15 THEN NULL ELSE statement_timestamp() END,
      CASE WHEN $15 THEN to_timestamp(0)
        ELSE statement_timestamp() + $6::float8 * interval '1 millisecond' END,
      statement_timestamp() + (CASE WHEN $15 THEN 0 ELSE $6::float8 END + $7::float8) * interval '1 millisecond',
      $7::bigint,
      false,
      $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp()), $14::text,
      statement_timestamp() + (CASE WHEN $15 THEN 0 ELSE $6::float8 END + $7::float8) * interval '1 millisecond'
    ON CONFLICT (tenant, key) DO NOTHING
    RETURNING record.*;
  IF FOUND THEN
    RETURN;
  END IF;
  -- The upsert. Its inserted row (`excluded`) is the plain insert's; a life this claim starts
  -- on the row ('fresh', 'takeover', 'consume') takes its lease from $6 and $7 directly, since
  -- `excluded` holds no lease when $15.
  RETURN QUERY
    INSERT INTO {{table}} AS record (
      tenant, key, tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms, waited,
      run_id, call_id, description, updated_at, codec, sweep_at
    )
    SELECT
      $1, $2, $3, $4,
      CASE WHEN $15 THEN 'awaiting_approval' ELSE 'in_progress' END,
      CASE WHEN $15 THEN 0 ELSE 1 END, CASE WHEN $15 THEN 0 ELSE 1 END, $5,
      CASE WHEN $15 THEN NULL ELSE statement_timestamp() END,
      CASE WHEN $15 THEN to_timestamp(0)
        ELSE statement_timestamp() + $6::float8 * interval '1 millisecond' END,
      statement_timestamp() + (CASE WHEN $15 THEN 0 ELSE $6::float8 END + $7::float8) * interval '1 millisecond',
      $7::bigint,
      false,
      $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp()), $14::text,
      statement_timestamp() + (CASE WHEN $15 THEN 0 ELSE $6::float8 END + $7::float8) * interval '1 millisecond'
    ON CONFLICT (tenant, key) DO UPDATE SET (
      tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms,
      outcome, outcome_bytes, error_type, error_message, waited,
      run_id, call_id, description, updated_at, resolution, codec, sweep_at, approval
    ) = (
      SELECT
        CASE WHEN decision.action IN ('fresh', 'ask') THEN excluded.tool ELSE record.tool END,
        CASE WHEN decision.action IN ('fresh', 'ask') THEN excluded.fingerprint ELSE record.fingerprint END,
        CASE decision.action
          WHEN 'fresh' THEN 'in_progress'
          WHEN 'takeover' THEN 'in_progress'
          WHEN 'consume' THEN 'in_progress'
          WHEN 'ask' THEN 'awaiting_approval'
          WHEN 'abandon' THEN 'abandoned'
          WHEN 'indeterminate' THEN 'indeterminate'
          ELSE record.state
        END,
        CASE decision.action
          WHEN 'fresh' THEN 1 WHEN 'consume' THEN 1 WHEN 'ask' THEN 0
          WHEN 'takeover' THEN record.fence + 1 ELSE record.fence
        END,
        CASE decision.action
          WHEN 'fresh' THEN 1 WHEN 'consume' THEN 1 WHEN 'ask' THEN 0
          WHEN 'takeover' THEN record.attempt + 1 ELSE record.attempt
        END,
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask') THEN excluded.owner ELSE record.owner END,
        CASE
          WHEN decision.action IN ('fresh', 'takeover', 'consume') THEN statement_timestamp()
          WHEN decision.action = 'ask' THEN NULL
          ELSE record.claimed_at
        END,
        CASE
          WHEN decision.action IN ('fresh', 'takeover', 'consume')
            THEN statement_timestamp() + $6::float8 * interval '1 millisecond'
          WHEN decision.action = 'ask' THEN to_timestamp(0)
          WHEN decision.action = 'resend'
            THEN greatest(record.lease_expires_at, statement_timestamp() + $6::float8 * interval '1 millisecond')
          ELSE record.lease_expires_at
        END,
        CASE
          WHEN decision.action IN ('fresh', 'takeover', 'consume')
            THEN statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond'
          WHEN decision.action = 'ask' THEN statement_timestamp() + $7::float8 * interval '1 millisecond'
          WHEN decision.action = 'resend'
            THEN greatest(record.expires_at, statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond')
          WHEN decision.action IN ('abandon', 'indeterminate')
            THEN statement_timestamp() + $7::float8 * interval '1 millisecond'
          ELSE record.expires_at
        END,
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask') THEN excluded.retention_ms
          ELSE record.retention_ms END,
        CASE WHEN decision.action IN ('fresh', 'ask') THEN NULL ELSE record.outcome END,
        CASE WHEN decision.action IN ('fresh', 'ask') THEN NULL ELSE record.outcome_bytes END,
        CASE decision.action
          WHEN 'fresh' THEN NULL
          WHEN 'ask' THEN NULL
          WHEN 'takeover' THEN NULL
          WHEN 'abandon' THEN 'LeaseExpired'
          WHEN 'indeterminate' THEN 'LeaseExpired'
          ELSE record.error_type
        END,
        CASE decision.action
          WHEN 'fresh' THEN NULL
          WHEN 'ask' THEN NULL
          WHEN 'takeover' THEN NULL
          WHEN 'abandon' THEN 'the lease of attempt ' || record.attempt || ' expired and ' || $9::integer
            || ' attempt(s) were lost'
          WHEN 'indeterminate' THEN 'the lease of attempt ' || record.attempt
            || ' expired before its outcome was recorded; the effect may have happened'
          ELSE record.error_message
        END,
        CASE decision.action WHEN 'fresh' THEN false WHEN 'ask' THEN false WHEN 'busy' THEN true
          ELSE record.waited END,
        -- the new life's or attempt's ids (the claim's replace the request's when it consumes)
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask') THEN excluded.run_id ELSE record.run_id END,
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask') THEN excluded.call_id ELSE record.call_id END,
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask') THEN excluded.description
          ELSE record.description END,
        CASE WHEN decision.action IN ('fresh', 'takeover', 'consume', 'ask', 'abandon', 'indeterminate')
          THEN date_trunc('milliseconds', statement_timestamp()) ELSE record.updated_at END,
        CASE WHEN decision.action IN ('fresh', 'ask') THEN NULL ELSE record.resolution END,
        -- the codec of the guard whose claim started this life of the key (or consumed its approval)
        CASE WHEN decision.action IN ('fresh', 'consume', 'ask') THEN excluded.codec ELSE record.codec END,
        -- The sweep bound stays at or above expires_at (every new expires_at is at most now +
        -- lease + retention, or the row's own).
        CASE WHEN decision.action IN ('keep', 'busy') THEN record.sweep_at
          ELSE greatest(record.sweep_at, record.expires_at,
            statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond') END,
        -- the decision that let the call run is kept for its whole life
        CASE WHEN decision.action IN ('fresh', 'ask') THEN NULL ELSE record.approval END
      FROM (
        SELECT CASE
          -- Past retention: the row is treated as absent and replaced (by a request when the
          -- call needs an approval).
          WHEN record.expires_at <= statement_timestamp() THEN CASE WHEN $15 THEN 'ask' ELSE 'fresh' END
          -- Another tool, or other arguments when they must match: report, change nothing.
          WHEN record.tool <> excluded.tool
            OR (($10::boolean OR $15 OR record.state IN ('awaiting_approval', 'approved', 'denied'))
              AND record.fingerprint <> excluded.fingerprint) THEN 'keep'
          -- An approval: this claim uses it, under the row lock, so exactly one claim does.
          WHEN record.state = 'approved' THEN 'consume'
          -- The holder itself asking again (a request resent after its reply was lost).
          WHEN record.state = 'in_progress' AND record.owner = excluded.owner THEN 'resend'
          -- Settled, awaiting an approval, or denied.
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
    RETURNING record.*;
END
$toolfence_claim$;

CREATE OR REPLACE FUNCTION {{claim_function}}(
  text, text, text, text, text, float8, float8, text, integer, boolean, text, text, text, text
) RETURNS SETOF {{table}} LANGUAGE sql AS $toolfence_claim_14$
  SELECT * FROM {{claim_function}}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, false)
$toolfence_claim_14$;

-- @online statement validate the state CHECK
ALTER TABLE {{table}} VALIDATE CONSTRAINT {{state_check}};

-- @online statement validate the fence CHECK
ALTER TABLE {{table}} VALIDATE CONSTRAINT {{fence_check}};

-- @online statement validate the attempt CHECK
ALTER TABLE {{table}} VALIDATE CONSTRAINT {{attempt_check}};
