SELECT count(*) AS live FROM {{table}} WHERE tenant = ? AND expires_at_ms > ?;
