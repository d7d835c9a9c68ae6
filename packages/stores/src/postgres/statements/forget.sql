-- forget: erase every record of tenant $1, expired ones included; counts the live ones.
-- The tenant's resolution entries go in the same statement.
WITH erased AS (
  DELETE FROM {{table}} WHERE tenant = $1 RETURNING expires_at
), journal AS (
  DELETE FROM {{resolutions_table}} WHERE tenant = $1
)
SELECT count(*) FILTER (WHERE expires_at > statement_timestamp())::float8 AS erased
FROM erased;
