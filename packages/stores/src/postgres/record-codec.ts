// Rows of the records table to and from the contract's shapes (columns as in migrations/0001_init.sql,
// migrations/0003_outcome_bytes.sql and migrations/0004_listing.sql).
import type { ApprovalEntry, IdempotencyRecord, RecordState, ResolutionEntry } from '@toolfence/core/store';

/** A row as pg returns it. */
export type Row = Record<string, unknown>;

/**
 * How an outcome is written (migration 0003): as text unless it holds NUL, which a PostgreSQL text
 * value cannot; then as its UTF-8 bytes. A well-formed string round-trips through UTF-8 exactly.
 */
export function storedOutcome(outcome: string): { text: string | null; bytes: Buffer | null } {
  return outcome.includes('\u0000')
    ? { text: null, bytes: Buffer.from(outcome, 'utf8') }
    : { text: outcome, bytes: null };
}

/** The outcome of a completed row: `outcome` when set (see 0003_outcome_bytes.sql), else the bytes. */
function readOutcome(row: Row): string | undefined {
  if (row.state !== 'completed') return undefined;
  if (row.outcome !== null && row.outcome !== undefined) return String(row.outcome);
  const bytes = row.outcome_bytes;
  if (Buffer.isBuffer(bytes)) return bytes.toString('utf8');
  return undefined;
}

export function toRecord(row: Row): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: String(row.key),
    tenant: String(row.tenant),
    tool: String(row.tool),
    fingerprint: String(row.fingerprint),
    state: row.state as RecordState,
    fence: Number(row.fence),
    attempt: Number(row.attempt),
    owner: String(row.owner),
    leaseExpiresAtMs: Number(row.lease_expires_at_ms),
    expiresAtMs: Number(row.expires_at_ms),
    // The statements that answer with a whole record (get, claim, resolve, holder answers) carry it.
    ...(typeof row.codec === 'string' ? { codec: row.codec } : {}),
    ...(row.retention_ms === undefined || row.retention_ms === null
      ? {}
      : { retentionMs: Number(row.retention_ms) }),
  };
  const outcome = readOutcome(row);
  if (outcome !== undefined) record.outcome = outcome;
  if (row.error_type !== null && row.error_type !== undefined) {
    record.error = { type: String(row.error_type), message: String(row.error_message ?? '') };
  }
  return { ...record, ...operatorFieldsOf(row) };
}

/** The operator fields of a record row that carries them (get, list); absent columns add nothing. */
export function operatorFieldsOf(row: Row): Partial<IdempotencyRecord> {
  const fields: { -readonly [K in keyof IdempotencyRecord]?: IdempotencyRecord[K] } = {};
  if (typeof row.run_id === 'string') fields.runId = row.run_id;
  if (typeof row.call_id === 'string') fields.callId = row.call_id;
  if (typeof row.description === 'string') fields.description = row.description;
  if (row.claimed_at_ms !== undefined && row.claimed_at_ms !== null)
    fields.claimedAtMs = Number(row.claimed_at_ms);
  if (row.updated_at_ms !== undefined && row.updated_at_ms !== null)
    fields.updatedAtMs = Number(row.updated_at_ms);
  if (row.resolution !== undefined && row.resolution !== null)
    fields.resolution = resolutionOf(row.resolution);
  if (row.approval !== undefined && row.approval !== null) fields.approval = approvalOf(row.approval);
  return fields;
}

/** The operator's decision a row keeps (0010_approvals.sql: jsonb with approved, by, reason, atMs). */
function approvalOf(value: unknown): ApprovalEntry {
  const entry = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
  return {
    approved: entry.approved === true,
    ...(typeof entry.by === 'string' ? { by: entry.by } : {}),
    ...(typeof entry.reason === 'string' ? { reason: entry.reason } : {}),
    atMs: Number(entry.atMs),
  };
}

function resolutionOf(value: unknown): ResolutionEntry {
  const entry = (typeof value === 'string' ? JSON.parse(value) : value) as Record<string, unknown>;
  return {
    key: String(entry.key),
    tenant: String(entry.tenant),
    tool: String(entry.tool),
    action: entry.action as ResolutionEntry['action'],
    fromState: entry.fromState as ResolutionEntry['fromState'],
    fence: Number(entry.fence),
    attempt: Number(entry.attempt),
    ...(entry.error === undefined ? {} : { error: entry.error as ResolutionEntry['error'] }),
    ...(entry.by === undefined ? {} : { by: String(entry.by) }),
    ...(entry.reason === undefined ? {} : { reason: String(entry.reason) }),
    atMs: Number(entry.atMs),
    ...(entry.forced === true ? { forced: true } : {}),
  } as ResolutionEntry;
}
