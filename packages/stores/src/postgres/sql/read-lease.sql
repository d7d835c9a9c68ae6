-- read-lease: what a waiter needs to decide, judged by the database clock.
-- $1 tenant, $2 key. No row when absent or past retention.
SELECT
  state,
  floor(extract(epoch FROM lease_expires_at) * 1000)::float8 AS lease_expires_at_ms,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms
FROM {{table}}
WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp();
