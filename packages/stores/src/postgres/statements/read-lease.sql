-- read-lease: what a waiter needs to decide, judged by the database clock; marks the record
-- `waited` so that its settle is notified (see 0002_notify_waited.sql).
-- $1 tenant, $2 key. No row when absent or past retention. Otherwise one row: state, lease
-- deadline, the database clock, `lease_expired` and `lease_remaining_ms`, and `notified`: true
-- when a settle of the record as returned is certain to NOTIFY (it was marked by this statement,
-- or already marked).
--
-- `lease_expired` is judged exactly as claim.sql judges a lease (`lease_expires_at >
-- statement_timestamp()`, microseconds), not from the deadline rounded to milliseconds: a waiter
-- told the lease expired is then never told `busy` by its next claim for that lease (rule S6).
-- `lease_remaining_ms` is rounded up, so a timer armed for it fires at or after the deadline.
--
-- `marked` writes only when the mark is missing (the first read of a waiter on this record), and
-- it judges the row on its latest committed version (UPDATE under READ COMMITTED). `seen` reads
-- the statement's snapshot otherwise. One race is left to the caller: the UPDATE found the row
-- changed by a transaction that committed after the snapshot (no longer in progress, or marked
-- by another waiter), and the snapshot still shows it in progress and unmarked: then `notified`
-- is false and the caller reads again (a new statement, a new snapshot).
WITH marked AS (
  UPDATE {{table}} AS record
  SET waited = true
  WHERE record.tenant = $1::text AND record.key = $2::text
    AND record.expires_at > statement_timestamp()
    AND record.state = 'in_progress' AND NOT record.waited
  RETURNING record.state, record.lease_expires_at, true AS notified
), seen AS (
  SELECT record.state, record.lease_expires_at,
    (record.state <> 'in_progress' OR record.waited) AS notified
  FROM {{table}} AS record
  WHERE record.tenant = $1::text AND record.key = $2::text
    AND record.expires_at > statement_timestamp()
    AND NOT EXISTS (SELECT 1 FROM marked)
), current AS (
  SELECT state, lease_expires_at, notified FROM marked
  UNION ALL
  SELECT state, lease_expires_at, notified FROM seen
)
SELECT
  state,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  lease_expires_at <= statement_timestamp() AS lease_expired,
  ceil(extract(epoch FROM lease_expires_at - statement_timestamp()) * 1000)::float8 AS lease_remaining_ms,
  notified
FROM current;
