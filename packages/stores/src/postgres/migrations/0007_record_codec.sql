-- Migration 0007: each record says which codec wrote it: the name of the
-- guard's codec (`OutcomeCodec.name`, `json` by default) is kept with the claim that starts a life
-- of the key, so an operator tool that cannot encode for it refuses before writing an outcome the
-- application could not read. Placeholders as in 0005_claim_function.sql.
--
-- The claim function gets a 14th argument, the codec, as an overload: the 13-argument function of
-- 0005 stays for stores of the previous version during a rolling upgrade (their records have no
-- codec, which operator tools read as before). The decision is 0005's, unchanged; only the
-- `codec` column is written, on a fresh life (a takeover keeps the life's codec).
ALTER TABLE {{table}} ADD COLUMN codec text;
CREATE FUNCTION {{claim_function}}(
  text, text, text, text, text, float8, float8, text, integer, boolean, text, text, text, text
) RETURNS SETOF {{table}} LANGUAGE plpgsql AS $toolfence_claim$
BEGIN
  RETURN QUERY
  SELECT record.*
  FROM {{table}} AS record
  WHERE record.tenant = $1 AND record.key = $2
    AND record.expires_at > statement_timestamp()
    AND (
      record.tool <> $3
      OR ($10 AND record.fingerprint <> $4)
      OR record.state <> 'in_progress'
      OR (record.owner <> $5 AND record.lease_expires_at > statement_timestamp())
    );
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO {{table}} AS record (
      tenant, key, tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms, waited,
      run_id, call_id, description, updated_at, codec
    )
    SELECT
      $1, $2, $3, $4, 'in_progress', 1, 1, $5,
      statement_timestamp(),
      statement_timestamp() + $6::float8 * interval '1 millisecond',
      statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond',
      $7::bigint,
      false,
      $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp()), $14::text
    ON CONFLICT (tenant, key) DO UPDATE SET (
      tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms,
      outcome, outcome_bytes, error_type, error_message, waited,
      run_id, call_id, description, updated_at, resolution, codec
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
        CASE WHEN decision.action = 'fresh' THEN NULL ELSE record.resolution END,
        -- the codec of the guard whose claim started this life of the key
        CASE WHEN decision.action = 'fresh' THEN excluded.codec ELSE record.codec END
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
    RETURNING record.*;
END
$toolfence_claim$;
