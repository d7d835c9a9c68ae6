// Approvals on SQLite (docs/store-contract.md in @toolfence/core, "Approvals"): the row a claim
// that needs an approval writes, the claim that consumes an approval, and an operator's decision.
// Each runs inside the claim's or the decision's one BEGIN IMMEDIATE transaction, on the row read
// under the write lock: two processes' claims of one `approved` row are serialised by that lock,
// and the second reads the `in_progress` row the first committed. So an approval is used once.
import type {
  ApprovalDecision,
  ApprovalEntry,
  ApprovalState,
  ClaimOptions,
  ClaimResult,
  DecideResult,
  RecordRef,
} from '@toolfence/core/store';
import { approvalDecision } from '@toolfence/core/store';
import type { Decided, RecordsDatabase } from './backend.js';
import { type RecordRow, takeoverInfo, toRecord } from './record-codec.js';

/** The fields of a record before its claim; the rest of `row` (owner, ids, codec) stays. */
function beforeClaim(
  row: RecordRow,
  state: ApprovalState,
  approval: ApprovalEntry | undefined,
  now: number,
  retentionMs: number,
): RecordRow {
  return {
    ...row,
    state,
    fence: 0,
    attempt: 0,
    lease_expires_at_ms: 0,
    expires_at_ms: now + retentionMs,
    retention_ms: retentionMs,
    claimed_at_ms: null,
    updated_at_ms: now,
    approval: approval === undefined ? null : JSON.stringify(approval),
  };
}

/** Inserts a record before its claim (statements/insert-request.sql), over an expired row if any. */
function insertRequest(db: RecordsDatabase, row: RecordRow): void {
  db.run('insertRequest', [
    {
      tenant: row.tenant,
      key: row.key,
      tool: row.tool,
      fingerprint: row.fingerprint,
      state: row.state,
      owner: row.owner,
      expiresAtMs: row.expires_at_ms,
      retentionMs: row.retention_ms,
      runId: row.run_id,
      callId: row.call_id,
      description: row.description,
      updatedAtMs: row.updated_at_ms,
      codec: row.codec,
      approval: row.approval,
    },
  ]);
}

function freshRow(
  ref: RecordRef,
  call: {
    readonly tool: string;
    readonly fingerprint: string;
    readonly owner: string;
    readonly runId?: string | undefined;
    readonly callId?: string | undefined;
    readonly description?: string | undefined;
    readonly codec?: string | undefined;
  },
): RecordRow {
  return {
    tenant: ref.tenant,
    key: ref.key,
    tool: call.tool,
    fingerprint: call.fingerprint,
    state: 'awaiting_approval',
    fence: 0,
    attempt: 0,
    owner: call.owner,
    lease_expires_at_ms: 0,
    expires_at_ms: 0,
    retention_ms: 1,
    outcome: null,
    error_type: null,
    error_message: null,
    run_id: call.runId ?? null,
    call_id: call.callId ?? null,
    description: call.description ?? null,
    claimed_at_ms: null,
    updated_at_ms: 0,
    resolution: null,
    codec: call.codec ?? null,
    approval: null,
    sweep_at_ms: null, // insert-request.sql writes the retention deadline
  };
}

/** No live row, and the call needs an approval: write `awaiting_approval` and say so. */
export function askApproval(
  db: RecordsDatabase,
  ref: RecordRef,
  options: ClaimOptions,
  now: number,
): ClaimResult {
  const row = beforeClaim(freshRow(ref, options), 'awaiting_approval', undefined, now, options.retentionMs);
  insertRequest(db, row);
  return { status: 'approval_required', record: toRecord(row) };
}

/**
 * The claim that uses the approval of `row` (read `approved` under the write lock): this claim's
 * `in_progress` life at fence 1, attempt 1, with its owner, lease, retention and ids (absent ones
 * included). update-record.sql leaves the `approval` column, so the approval stays on the row.
 */
export function consumeApproval(
  db: RecordsDatabase,
  row: RecordRow,
  options: ClaimOptions,
  now: number,
): ClaimResult {
  const leaseExpiresAtMs = now + options.leaseMs;
  db.write({
    ...row,
    state: 'in_progress',
    fence: 1,
    attempt: 1,
    owner: options.owner,
    lease_expires_at_ms: leaseExpiresAtMs,
    expires_at_ms: leaseExpiresAtMs + options.retentionMs,
    retention_ms: options.retentionMs,
    ...takeoverInfo(options, now),
  });
  // The claim's codec starts this life (update-record.sql keeps a row's codec, as a takeover does):
  // it differs only from that of a decision that created the row.
  const codec = options.codec ?? null;
  if (codec !== row.codec) db.run('updateCodec', [codec, row.tenant, row.key]);
  const approval = row.approval === null ? undefined : (JSON.parse(row.approval) as ApprovalEntry);
  return {
    status: 'acquired',
    fence: 1,
    attempt: 1,
    leaseExpiresAtMs,
    takeover: false,
    ...(approval === undefined ? {} : { approval }),
  };
}

function audit(decision: ApprovalDecision, now: number): ApprovalEntry {
  return {
    approved: decision.approved,
    ...(decision.by === undefined ? {} : { by: decision.by }),
    ...(decision.reason === undefined ? {} : { reason: decision.reason }),
    atMs: now,
  };
}

/** An operator's decision on the call under `ref`, inside one transaction at `now`. */
export function decideOn(
  db: RecordsDatabase,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
  now: number,
): Decided<DecideResult> {
  db.sweep(now);
  const row = db.liveRow(ref, now);
  const state: ApprovalState = decision.approved ? 'approved' : 'denied';
  const action = approvalDecision(row, decision);
  switch (action) {
    case 'not_found':
      return { result: { status: 'not_found' } };
    case 'create': {
      // No call asked yet: the request has no owner.
      const created = beforeClaim(
        freshRow(ref, { ...decision, owner: '' }),
        state,
        audit(decision, now),
        now,
        retentionMs,
      );
      insertRequest(db, created);
      return { result: { status: 'decided', record: toRecord(created) } };
    }
    case 'write': {
      const changed = beforeClaim(row as RecordRow, state, audit(decision, now), now, retentionMs);
      db.run('updateApproval', [
        {
          state,
          expiresAtMs: changed.expires_at_ms,
          retentionMs,
          updatedAtMs: now,
          approval: changed.approval,
          tenant: ref.tenant,
          key: ref.key,
        },
      ]);
      // The decision restarts the retention: keep the sweep bound above it, as backend.ts write()
      // does (the sweep finds rows by the bound, and would visit this live row on every pass).
      if (changed.sweep_at_ms === null || changed.expires_at_ms > changed.sweep_at_ms) {
        db.run('raiseSweep', [changed.expires_at_ms, ref.tenant, ref.key]);
      }
      return { result: { status: 'decided', record: toRecord(changed) } };
    }
    case 'unchanged':
      return { result: { status: 'decided', record: toRecord(row as RecordRow) } };
    default:
      return { result: { status: action, record: toRecord(row as RecordRow) } };
  }
}
