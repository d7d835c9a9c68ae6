-- Every resolution entry of a tenant (forget, in the same transaction).
DELETE FROM {{resolutions_table}} WHERE tenant = ?;
