-- get: read a live record. $1 tenant, $2 key. No row when absent or past retention.
-- @include record-columns
  resolution
FROM {{table}}
WHERE tenant = $1 AND key = $2 AND expires_at > statement_timestamp();
