// Rows of the records table (migrations/0001_init.sql, 0002_listing.sql, 0006_approvals.sql) and
// the contract's records: the columns a record row keeps for operators (the ids and description of
// its call, when it was claimed and entered its state, its resolution entry, the operator's
// approval) and the resolution journal's rows, written in the transaction of the resolution itself.
import type {
  ApprovalEntry,
  ClaimOptions,
  Holder,
  IdempotencyRecord,
  RecordRef,
  RecordState,
  Resolution,
  ResolutionEntry,
} from '@toolfence/core/store';
import { overridesLiveHolder } from '@toolfence/core/store';

export interface RecordRow extends OperatorColumns {
  tenant: string;
  key: string;
  tool: string;
  fingerprint: string;
  state: RecordState;
  fence: number;
  attempt: number;
  owner: string;
  lease_expires_at_ms: number;
  expires_at_ms: number;
  retention_ms: number;
  outcome: string | null;
  error_type: string | null;
  error_message: string | null;
  /** The sweep bound (0005_sweep_bound.sql): at or above expires_at_ms; NULL from a previous version. */
  sweep_at_ms: number | null;
}

/** The key of a record among this process's waiters. */
export function recordId(ref: RecordRef): string {
  // NUL is refused in names, so tenant and key never run together ambiguously.
  return `${ref.tenant}\u0000${ref.key}`;
}

export function isHolder(row: RecordRow, holder: Holder): boolean {
  return row.fence === holder.fence && row.owner === holder.owner;
}

export function toRecord(row: RecordRow): IdempotencyRecord {
  const record: { -readonly [K in keyof IdempotencyRecord]: IdempotencyRecord[K] } = {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    fingerprint: row.fingerprint,
    state: row.state,
    fence: row.fence,
    attempt: row.attempt,
    owner: row.owner,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    expiresAtMs: row.expires_at_ms,
    retentionMs: row.retention_ms,
  };
  if (row.outcome !== null) record.outcome = row.outcome;
  if (row.error_type !== null) record.error = { type: row.error_type, message: row.error_message ?? '' };
  return { ...record, ...operatorFieldsOf(row) };
}

/** The operator columns of a record row. */
export interface OperatorColumns {
  readonly run_id: string | null;
  readonly call_id: string | null;
  readonly description: string | null;
  readonly claimed_at_ms: number | null;
  readonly updated_at_ms: number;
  readonly resolution: string | null;
  /** The guard's codec of the claim that started this life (migration 0004); null before it. */
  readonly codec: string | null;
  /** The operator's decision on the call, as JSON (ApprovalEntry; migration 0006); null when none. */
  readonly approval: string | null;
}

/** What a claim records for operators: run_id, call_id, description (insert-record.sql order). */
export function callInfo(options: ClaimOptions): (string | null)[] {
  return [options.runId ?? null, options.callId ?? null, options.description ?? null];
}

/** The columns a takeover changes for operators: the new attempt's ids and times. */
export function takeoverInfo(options: ClaimOptions, now: number): Partial<OperatorColumns> {
  const [runId, callId, description] = callInfo(options);
  return {
    run_id: runId ?? null,
    call_id: callId ?? null,
    description: description ?? null,
    claimed_at_ms: now,
    updated_at_ms: now,
  };
}

/** The operator fields of a record row. */
export function operatorFieldsOf(row: OperatorColumns): Partial<IdempotencyRecord> {
  const fields: { -readonly [K in keyof IdempotencyRecord]?: IdempotencyRecord[K] } = {};
  if (row.run_id !== null) fields.runId = row.run_id;
  if (row.call_id !== null) fields.callId = row.call_id;
  if (row.description !== null) fields.description = row.description;
  if (row.claimed_at_ms !== null) fields.claimedAtMs = row.claimed_at_ms;
  fields.updatedAtMs = row.updated_at_ms;
  if (row.resolution !== null) fields.resolution = JSON.parse(row.resolution) as ResolutionEntry;
  if (typeof row.codec === 'string') fields.codec = row.codec;
  if (typeof row.approval === 'string') fields.approval = JSON.parse(row.approval) as ApprovalEntry;
  return fields;
}

interface ResolvableRow {
  readonly tenant: string;
  readonly key: string;
  readonly tool: string;
  readonly state: RecordState;
  readonly fence: number;
  readonly attempt: number;
  readonly error_type: string | null;
  readonly error_message: string | null;
  readonly lease_expires_at_ms: number;
}

/** The resolution entry of resolving `row` now. */
export function resolutionEntryOf(row: ResolvableRow, resolution: Resolution, now: number): ResolutionEntry {
  return {
    key: row.key,
    tenant: row.tenant,
    tool: row.tool,
    action: 'outcome' in resolution ? 'completed' : 'released',
    fromState: row.state as ResolutionEntry['fromState'],
    fence: row.fence,
    attempt: row.attempt,
    ...(row.error_type === null ? {} : { error: { type: row.error_type, message: row.error_message ?? '' } }),
    ...(resolution.by === undefined ? {} : { by: resolution.by }),
    ...(resolution.reason === undefined ? {} : { reason: resolution.reason }),
    atMs: now,
    ...(overridesLiveHolder({ state: row.state, leaseExpiresAtMs: row.lease_expires_at_ms }, now)
      ? { forced: true as const }
      : {}),
  };
}

/** The values of insert-resolution.sql. */
export function journalRow(entry: ResolutionEntry, expiresAtMs: number): unknown[] {
  return [
    entry.tenant,
    entry.key,
    entry.tool,
    entry.action,
    entry.fromState,
    entry.fence,
    entry.attempt,
    entry.error?.type ?? null,
    entry.error?.message ?? null,
    entry.by ?? null,
    entry.reason ?? null,
    entry.atMs,
    expiresAtMs,
    entry.forced === true ? 1 : 0,
  ];
}
