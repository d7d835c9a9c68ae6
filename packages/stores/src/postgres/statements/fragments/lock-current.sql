-- The live row of ($1 tenant, $2 key), locked: SELECT ... FOR UPDATE under READ COMMITTED
-- re-reads the latest committed version, so the statement decides on what concurrent callers
-- wrote (see renew.sql). Starts the statement's WITH list.
WITH current AS (
  SELECT *
  FROM {{table}}
  WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp()
  FOR UPDATE
)
