-- The codec of the claim that consumed an approval, when the decision that created the row had
-- another (approvals.ts): the claim starts the life, so its codec is the record's.
UPDATE {{table}} SET codec = ? WHERE tenant = ? AND "key" = ?;
