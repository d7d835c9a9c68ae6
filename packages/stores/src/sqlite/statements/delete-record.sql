DELETE FROM {{table}} WHERE tenant = ? AND "key" = ?;
