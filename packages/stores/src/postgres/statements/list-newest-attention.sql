-- list-newest-attention: list-newest.sql for a page of indeterminate and abandoned records only,
-- read by the attention index (0009_attention_index.sql): every such record has an error_type.
-- Parameters as list-newest.sql; $2 holds no other state. The rows the index gives (the
-- records an operator must look at, a few) are sorted here.
-- @include list-page
  AND error_type IS NOT NULL
  AND ($6::float8 IS NULL OR (updated_at, tenant COLLATE "C", key COLLATE "C") <
    (timestamptz 'epoch' + $6::float8 * interval '1 millisecond', $7::text, $8::text))
ORDER BY updated_at DESC, tenant COLLATE "C" DESC, key COLLATE "C" DESC
LIMIT $9::integer;
