// Approvals on DynamoDB (docs/store-contract.md in @toolfence/core, "Approvals"): the item a claim
// that needs an approval creates, the item of the claim that consumes an approval, and an
// operator's decision. Each ends in ONE conditional write on the premise it was decided on (the
// version token of the item read, or a free key), as every decision of this store does: two
// claims that read the same `approved` item race for one write on its version, and the loser
// decides again on the `in_progress` item the winner wrote. So an approval is used once.
import type {
  ApprovalDecision,
  ApprovalEntry,
  ApprovalState,
  ClaimOptions,
  ClaimResult,
  DecideResult,
  RecordRef,
  RecordState,
} from '@toolfence/core/store';
import { approvalDecision } from '@toolfence/core/store';
import { newVersion, type Operation, type RecordsTable } from './backend.js';
import { type Premise, putRecord } from './conditional-writes.js';
import { contention, settlePending } from './operator-writes.js';
import { isLive, type RecordItem, toRecord } from './record-codec.js';

const MAX_ROUNDS = 16;

/** The operator fields a claim (or a decision that creates the record) records. */
type CallFields = Pick<RecordItem, 'runId' | 'callId' | 'description' | 'codec'>;

function callFields(from: {
  readonly runId?: string | undefined;
  readonly callId?: string | undefined;
  readonly description?: string | undefined;
  readonly codec?: string | undefined;
}): CallFields {
  return {
    ...(from.runId === undefined ? {} : { runId: from.runId }),
    ...(from.callId === undefined ? {} : { callId: from.callId }),
    ...(from.description === undefined ? {} : { description: from.description }),
    ...(from.codec === undefined ? {} : { codec: from.codec }),
  };
}

type BeforeClaimField =
  | 'state'
  | 'fence'
  | 'attempt'
  | 'leaseExpiresAtMs'
  | 'expiresAtMs'
  | 'retentionMs'
  | 'updatedAtMs'
  | 'version';

/**
 * A life before its claim: fence 0 and attempt 0, so no holder's write (whose condition carries a
 * fence >= 1 and the state `in_progress`) ever matches it; no lease, no claim time.
 */
function beforeClaim(
  base: Omit<RecordItem, BeforeClaimField>,
  state: ApprovalState,
  now: number,
  retentionMs: number,
): RecordItem {
  const { claimedAtMs: _claimedAtMs, ...rest } = base;
  return {
    ...rest,
    state,
    fence: 0,
    attempt: 0,
    leaseExpiresAtMs: 0,
    expiresAtMs: now + retentionMs,
    retentionMs,
    updatedAtMs: now,
    version: newVersion(),
  };
}

/** The item a claim with `approval: 'required'` creates on a free key: `awaiting_approval`. */
export function requestItem(ref: RecordRef, options: ClaimOptions, now: number): RecordItem {
  return beforeClaim(
    {
      tenant: ref.tenant,
      key: ref.key,
      tool: options.tool,
      fingerprint: options.fingerprint,
      owner: options.owner,
      ...callFields(options),
    },
    'awaiting_approval',
    now,
    options.retentionMs,
  );
}

/**
 * The claim that uses the approval of `record` (an `approved` item): this claim's `in_progress`
 * life at fence 1, attempt 1, with its owner, lease, retention and ids (absent ones included);
 * the approval stays on the item. Written on the version of `record` only.
 */
export function consumeItem(
  record: RecordItem,
  options: ClaimOptions,
  now: number,
): { readonly next: RecordItem; readonly result: ClaimResult } {
  const { runId: _r, callId: _c, description: _d, codec: _k, ...rest } = record;
  const leaseExpiresAtMs = now + options.leaseMs;
  const next: RecordItem = {
    ...rest,
    ...callFields(options),
    state: 'in_progress',
    fence: 1,
    attempt: 1,
    owner: options.owner,
    leaseExpiresAtMs,
    expiresAtMs: leaseExpiresAtMs + options.retentionMs,
    retentionMs: options.retentionMs,
    claimedAtMs: now,
    updatedAtMs: now,
    version: newVersion(),
  };
  return {
    next,
    result: {
      status: 'acquired',
      fence: 1,
      attempt: 1,
      leaseExpiresAtMs,
      takeover: false,
      ...(record.approval === undefined ? {} : { approval: record.approval }),
    },
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

/**
 * `decideApproval`: read the item (strongly consistent), decide as every store does
 * (`approvalDecision`), then one conditional write on the version read (or on the key being free,
 * for a decision that creates the record); decided again on whatever refused it.
 */
export async function decideApproval(
  table: RecordsTable,
  op: Operation,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
): Promise<DecideResult> {
  let current = await table.read(op, ref);
  const state: ApprovalState = decision.approved ? 'approved' : 'denied';
  for (let round = 0; round < MAX_ROUNDS; round++) {
    // After the read: an item judged live now was live when it was read.
    const now = Date.now();
    const live = isLive(current, now) ? (current as RecordItem & { state: RecordState }) : undefined;
    const action = approvalDecision(live, decision);
    let next: RecordItem;
    let premise: Premise;
    switch (action) {
      case 'not_found':
        return { status: 'not_found' };
      case 'unchanged':
        return { status: 'decided', record: toRecord(live as RecordItem) };
      case 'conflict':
      case 'consumed':
      case 'changed':
      case 'denied':
        return { status: action, record: toRecord(live as RecordItem) };
      case 'create': {
        // An item past its retention is replaced on its version, once its pending resolution
        // entry has an item of its own (as a claim replaces it).
        if (current?.pending !== undefined) {
          await settlePending(table, op, current);
          current = await table.read(op, ref);
          continue;
        }
        next = beforeClaim(
          {
            tenant: ref.tenant,
            key: ref.key,
            tool: decision.tool,
            fingerprint: decision.fingerprint,
            // No call asked yet: the request has no owner.
            owner: '',
            ...callFields(decision),
          },
          state,
          now,
          retentionMs,
        );
        premise = current ?? 'absent';
        break;
      }
      case 'write': {
        const found = live as RecordItem;
        next = beforeClaim(found, state, now, retentionMs);
        premise = found;
        break;
      }
    }
    next.approval = audit(decision, now);
    const written = await putRecord(table, op, next, premise, now);
    if (written.written) return { status: 'decided', record: toRecord(next) };
    current = written.current;
  }
  return contention(op);
}
