-- Migration 0008: a complete is a HOT update. PostgreSQL rewrites a row in place (HOT: no new
-- index entries, about 40 % less WAL) only when the update changes no indexed column, columns
-- named in a partial index's predicate included. A complete changes `state`, `updated_at` and
-- `expires_at`; 0001 indexed `expires_at` (the sweep) and 0004's listing indexes name `state` in
-- their predicate and `updated_at` in their key, so no complete was HOT (0 of ~950,
-- bench/RESULTS.md). Placeholders as in 0005_claim_function.sql, and:
--   {{sweep_index}}   index on sweep_at (unqualified)
--
-- The sweep reads `sweep_at`, an upper bound of `expires_at` kept by every write: a claim sets it
-- to its own deadline (lease + retention), and a write that would move `expires_at` above it
-- raises it. A complete inside its lease lowers `expires_at` (the retention restarts then) and
-- leaves `sweep_at` as it is, so it changes no indexed column. A record past `expires_at` is
-- absent to every statement, as before; cleanup deletes it once `sweep_at` has passed too, at
-- most one lease later.
--
-- The listing reads the primary key (one tenant) or the table (every tenant) instead of indexes
-- a complete would have to change: the operator pays on its rare path, not the claim and the
-- complete on every call (bench/suites/postgres.ts prints the listing's time beside them).
--
-- The claim function also tries a plain INSERT ... ON CONFLICT DO NOTHING before the upsert (a
-- new key's claim no longer sets up the upsert's DO UPDATE); the decision is 0005's, unchanged.
--
-- Rolling upgrade: the claim function is replaced in place, so a store of the previous version
-- writes `sweep_at` on its claims too; its renew, complete and markIndeterminate do not raise it.
-- cleanup checks `expires_at` on every row it deletes, so such a row is never deleted early; it
-- is only looked at again by later sweeps until it expires. A store of the previous version
-- sweeps without the `expires_at` index (a sequential scan) until it is upgraded. The 13-argument
-- function of 0005 now calls the 14-argument one (no codec), so it writes `sweep_at` as well.
--
-- Online on a large table, as 0004: the head only changes the catalog and the functions; the
-- backfill runs in batches, the index is built CONCURRENTLY and the old indexes are dropped
-- CONCURRENTLY, each step resumable. Every statement here can run again after an interruption.
ALTER TABLE {{table}} ADD COLUMN IF NOT EXISTS sweep_at timestamptz;
-- A row that a store of a version before 0005 inserts (its own INSERT, not the claim function)
-- gets the insert time, a lower bound: the sweep looks at it and deletes it once `expires_at` has
-- passed. Without a default such rows stayed NULL: the sweep never found them, and the backfill
-- below, which runs until a batch finds no NULL, chased those inserts without end (the 1,000,000-
-- row upgrade under a writer never finished). Rows that exist stay NULL until the backfill.
ALTER TABLE {{table}} ALTER COLUMN sweep_at SET DEFAULT statement_timestamp();
CREATE OR REPLACE FUNCTION {{claim_function}}(
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
  -- A key without a row (most first calls): a plain insert. The upsert below sets up its DO UPDATE
  -- projection on every execution, which was most of a fresh claim's executor time. A key that
  -- has a row, or gets one from a concurrent claimer (DO NOTHING waits for it), inserts nothing
  -- here and goes on to the upsert, which decides as before.
  RETURN QUERY
    INSERT INTO {{table}} AS record (
      tenant, key, tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms, waited,
      run_id, call_id, description, updated_at, codec, sweep_at
    )
    SELECT
      $1, $2, $3, $4, 'in_progress', 1, 1, $5,
      statement_timestamp(),
      statement_timestamp() + $6::float8 * interval '1 millisecond',
      statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond',
      $7::bigint,
      false,
      $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp()), $14::text,
      statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond'
    ON CONFLICT (tenant, key) DO NOTHING
    RETURNING record.*;
  IF FOUND THEN
    RETURN;
  END IF;
  RETURN QUERY
    INSERT INTO {{table}} AS record (
      tenant, key, tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms, waited,
      run_id, call_id, description, updated_at, codec, sweep_at
    )
    SELECT
      $1, $2, $3, $4, 'in_progress', 1, 1, $5,
      statement_timestamp(),
      statement_timestamp() + $6::float8 * interval '1 millisecond',
      statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond',
      $7::bigint,
      false,
      $11::text, $12::text, $13::text, date_trunc('milliseconds', statement_timestamp()), $14::text,
      statement_timestamp() + ($6::float8 + $7::float8) * interval '1 millisecond'
    ON CONFLICT (tenant, key) DO UPDATE SET (
      tool, fingerprint, state, fence, attempt, owner,
      claimed_at, lease_expires_at, expires_at, retention_ms,
      outcome, outcome_bytes, error_type, error_message, waited,
      run_id, call_id, description, updated_at, resolution, codec, sweep_at
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
        CASE WHEN decision.action = 'fresh' THEN excluded.codec ELSE record.codec END,
        -- The sweep bound stays at or above expires_at: every new expires_at above is at most
        -- the claim's (excluded) or the row's own; unchanged when the row is only rewritten.
        CASE WHEN decision.action IN ('keep', 'busy') THEN record.sweep_at
          ELSE greatest(record.sweep_at, record.expires_at, excluded.expires_at) END
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

CREATE OR REPLACE FUNCTION {{claim_function}}(
  text, text, text, text, text, float8, float8, text, integer, boolean, text, text, text
) RETURNS SETOF {{table}} LANGUAGE sql AS $toolfence_claim_13$
  SELECT * FROM {{claim_function}}($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, NULL::text)
$toolfence_claim_13$;

-- @online batched backfill sweep_at
UPDATE {{table}} SET sweep_at = expires_at
 WHERE ctid = ANY (ARRAY(SELECT ctid FROM {{table}} WHERE sweep_at IS NULL LIMIT {{batch_limit}}));

-- @online index sweep_index
CREATE INDEX CONCURRENTLY IF NOT EXISTS {{sweep_index}} ON {{table}} (sweep_at);

-- @online statement drop the expires_at index
DROP INDEX CONCURRENTLY IF EXISTS {{schema}}.{{expires_index}};

-- @online statement drop the tenant listing index
DROP INDEX CONCURRENTLY IF EXISTS {{schema}}.{{list_tenant_index}};

-- @online statement drop the listing index across tenants
DROP INDEX CONCURRENTLY IF EXISTS {{schema}}.{{list_all_index}};
