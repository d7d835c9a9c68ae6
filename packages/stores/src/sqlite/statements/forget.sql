-- Every record of a tenant; the caller counts the live ones first, in the same transaction.
DELETE FROM {{table}} WHERE tenant = ?;
