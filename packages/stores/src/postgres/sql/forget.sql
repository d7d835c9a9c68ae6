-- forget: erase every record of tenant $1, expired ones included; counts the live ones.
WITH erased AS (
  DELETE FROM {{table}} WHERE tenant = $1 RETURNING expires_at
)
SELECT count(*) FILTER (WHERE expires_at > statement_timestamp())::float8 AS erased
FROM erased;
