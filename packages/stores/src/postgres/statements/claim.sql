-- claim: decide ownership of one key in ONE statement.
-- $1 tenant, $2 key, $3 tool, $4 fingerprint, $5 owner, $6 lease ms, $7 retention ms,
-- $8 mode ('at-least-once' | 'at-most-once'), $9 max attempts, $10 check fingerprint,
-- $11 run id, $12 call id, $13 description, $14 codec (NULL when absent): kept for operators,
-- $15 the call needs an approval (0010_approvals.sql: `awaiting_approval` is written, `approved` consumed).
-- Returns exactly one row: the record as it stands after this statement, the database clock,
-- and `acquired` (true when the caller is the holder: this statement made it so, or the caller's
-- own earlier claim did and this is the same request resent; owners are unique per attempt).
--
-- The decision is the claim function of migration 0005_claim_function.sql (as 0008_hot_complete.sql
-- replaced it), called once by this statement. Three paths, chosen inside it:
--
-- The read (read-only: no row lock, no WAL, no commit flush, no INSERT set up): a live row whose
-- answer needs no change: a conflict (other tool, or other arguments when they must match), a
-- settled record (completed, indeterminate, abandoned), or one held by another owner under a
-- live lease (busy). It is read from a snapshot taken inside the call, i.e. the latest version
-- committed at that instant, so the answer was true at that instant, which lies inside the call:
-- a settled record only changes by resolve, by a late complete of its own holder, by forget or by
-- expiry, each a later instant than the one answered for; a busy answer only sends the caller
-- to waitForSettle, which re-reads. Conflict is judged first, as on the write path.
--
-- The insert, when the read found nothing: INSERT ... ON CONFLICT DO NOTHING of a new record
-- (no DO UPDATE to set up). It inserts only where no row exists (a concurrent insert of the same
-- key is waited for, and then conflicts), i.e. exactly when the upsert below would take its
-- INSERT branch; otherwise it writes nothing and the upsert decides.
--
-- The upsert, run only when neither answered (an expired row, the holder resending, an
-- expired lease, or a row that a concurrent claimer inserts or changes right now):
-- INSERT ... ON CONFLICT DO UPDATE with no WHERE. The DO UPDATE always locks the row and
-- evaluates against its LATEST committed version (not the read's snapshot), so concurrent
-- claimers are serialised by the row lock and each sees what the previous one wrote. When
-- nothing should change (the row became settled or busy between the read and the lock), the
-- row is rewritten with its own values so that RETURNING still yields it. "DO NOTHING, then
-- SELECT" would read an older snapshot instead. A busy claimer on this path marks the row
-- `waited` (it is about to wait); see 0002_notify_waited.sql.
--
-- Clock: statement_timestamp() — one value for the whole statement (the decision and the
-- deadlines it writes agree; the function sees this statement's value) and, unlike now(), not
-- frozen by a caller's open transaction.
-- @include record-columns
  resolution,
  floor(extract(epoch FROM statement_timestamp()) * 1000)::float8 AS now_ms,
  (owner = $5::text AND state = 'in_progress') AS acquired
FROM {{claim_function}}(
  $1::text, $2::text, $3::text, $4::text, $5::text, $6::float8, $7::float8, $8::text,
  $9::integer, $10::boolean, $11::text, $12::text, $13::text, $14::text, $15::boolean
);
