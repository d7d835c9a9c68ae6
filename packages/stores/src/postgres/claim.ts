// PostgresStore.claim: one statement (statements/claim.sql, calling the claim function of migration 0005)
// decides; its row becomes a ClaimResult.
import type { ClaimOptions, ClaimResult, RecordRef } from '@toolfence/core/store';
import { approvalClaimDecision, claimConflicts, StoreUnavailableError } from '@toolfence/core/store';
import type { StatementRunner } from './backend.js';
import { type Row, toRecord } from './record-codec.js';

/** Runs the claim statement; the row it answers with. */
export function claimRow(
  runner: StatementRunner,
  ref: RecordRef,
  options: ClaimOptions,
): Promise<Row | undefined> {
  return runner.queryOne('claim', runner.sql.claim, [
    ref.tenant,
    ref.key,
    options.tool,
    options.fingerprint,
    options.owner,
    options.leaseMs,
    options.retentionMs,
    options.mode,
    options.maxAttempts,
    options.checkFingerprint,
    options.runId ?? null, // kept for operators
    options.callId ?? null,
    options.description ?? null,
    options.codec ?? null, // the guard's codec, kept with a new life (0007_record_codec.sql)
    options.approval === 'required', // 0010_approvals.sql
  ]);
}

/** What the claim statement's row says. */
export function claimResult(row: Row | undefined, options: ClaimOptions): ClaimResult {
  if (row === undefined) throw new StoreUnavailableError('claim', 'PostgreSQL returned no row for the claim');
  if (row.acquired === true) {
    const attempt = Number(row.attempt);
    const approval = toRecord(row).approval;
    return {
      status: 'acquired',
      fence: Number(row.fence),
      attempt,
      leaseExpiresAtMs: Number(row.lease_expires_at_ms),
      takeover: attempt > 1,
      ...(approval === undefined ? {} : { approval }),
    };
  }
  const record = toRecord(row);
  if (claimConflicts(record, options)) return { status: 'conflict', record };
  switch (record.state) {
    case 'completed':
      return { status: 'completed', record };
    case 'indeterminate':
      return { status: 'indeterminate', record };
    case 'abandoned':
      return { status: 'abandoned', record };
    case 'in_progress':
      return { status: 'busy', record, nowMs: Number(row.now_ms) };
    default:
      switch (approvalClaimDecision(record)) {
        case 'approval_required':
          return { status: 'approval_required', record };
        case 'denied':
          return { status: 'denied', record };
        default:
          // The claim function consumes an approved row under its lock; it never answers one.
          throw new StoreUnavailableError('claim', `PostgreSQL returned a record in state ${record.state}`);
      }
  }
}
