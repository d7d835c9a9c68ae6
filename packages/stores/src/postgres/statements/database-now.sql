-- database-now: the database clock alone (list answers it with an empty page).
SELECT floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms;
