// The ONE place where the replies of the Lua scripts (statements/*.lua) become results. Every script
// replies `{ code, nowMs, ...payload }`; the codes are listed in each script's header.
import {
  type ApprovalEntry,
  approvalClaimDecision,
  type ClaimOptions,
  type ClaimResult,
  type CompleteResult,
  claimConflicts,
  type IdempotencyRecord,
  type MarkIndeterminateResult,
  type RecordRef,
  type RecordState,
  type ReleaseResult,
  type RenewResult,
  type ResolutionEntry,
  type ResolveResult,
} from '@toolfence/core/store';
import { recordReplyOfString } from './record-unpack.js';

export const ReplyCode = {
  acquired: 1,
  completed: 2,
  busy: 3,
  indeterminate: 4,
  abandoned: 5,
  conflict: 6,
  /** The operation happened: renewed, completed, released, marked, resolved. */
  done: 10,
  notFound: 11,
  /** The holder (fence and owner) is not current. */
  stale: 12,
  /** The holder is current but the record is not in a state the operation applies to. */
  settled: 13,
  notResolvable: 14,
  found: 15,
  /** resolve: the record's holder is not the expected one. */
  changed: 16,
  /** resolve: the record is in progress under a live lease (and the resolve was not forced). */
  holderAlive: 17,
  /** claim: the record is settled; the reply carries its string, which the client judges. */
  settledString: 20,
  /** claim: awaiting_approval written now; the reply carries it. */
  approvalRequired: 21,
  /** decideApproval: the key was claimed, the decision changes nothing. */
  consumed: 22,
  /** decideApproval: an approval found a denial, which stands. */
  denied: 23,
} as const;

/** A reply no script sends: a version mismatch or a broken script. Becomes StoreUnavailableError. */
export class UnexpectedReplyError extends Error {
  constructor(script: string, reply: unknown) {
    super(`unexpected reply from the ${script} script: ${JSON.stringify(reply)?.slice(0, 200)}`);
    this.name = 'UnexpectedReplyError';
  }
}

export type Reply = readonly unknown[];

const recordStates: ReadonlySet<string> = new Set<RecordState>([
  'in_progress',
  'completed',
  'indeterminate',
  'abandoned',
  'awaiting_approval',
  'approved',
  'denied',
]);

export function asReply(script: string, reply: unknown): Reply {
  if (!Array.isArray(reply) || reply.length < 2) throw new UnexpectedReplyError(script, reply);
  return reply;
}

function codeOf(reply: Reply): number {
  return Number(reply[0]);
}

function text(script: string, reply: Reply, index: number): string {
  const value = reply[index];
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  throw new UnexpectedReplyError(script, reply);
}

/**
 * Largest integer the scripts send (statements/includes/01-record.lua clamps to it): ioredis' RESP decoder
 * misreads integers within about 48 of 2^53, so a value above 2^52 - 1 cannot be trusted to be
 * what Redis sent (rule S4).
 */
const MAX_REPLY_INTEGER = 2 ** 52 - 1;

export function integer(script: string, reply: Reply, index: number): number {
  const value = Number(reply[index]);
  if (!Number.isSafeInteger(value) || Math.abs(value) > MAX_REPLY_INTEGER) {
    throw new UnexpectedReplyError(script, reply);
  }
  return value;
}

/** The Redis clock (epoch ms) when the script ran. */
export function replyNowMs(script: string, reply: unknown): number {
  return integer(script, asReply(script, reply), 1);
}

/**
 * Decodes the record carried at reply[2..] (see `recordReply` in statements/includes/01-record.lua):
 * 13 elements, then runId, callId, description, claimedAtMs, updatedAtMs (18),
 * then a resolution entry's 12 fields when an operator resolved it, then retentionMs and the
 * codec (20 or 32), then an approval entry's 4 fields when the record has one (24 or 36).
 */
export function decodeRecord(script: string, ref: RecordRef, whole: Reply): IdempotencyRecord {
  const withApproval = whole.length === 24 || whole.length === 36;
  const reply = withApproval ? whole.slice(0, whole.length - 4) : whole;
  if (reply.length !== 13 && reply.length !== 20 && reply.length !== 32) {
    throw new UnexpectedReplyError(script, whole);
  }
  const state = text(script, reply, 2);
  if (!recordStates.has(state)) throw new UnexpectedReplyError(script, reply);
  const outcome = reply[10] === null ? undefined : text(script, reply, 10);
  const errorType = reply[11] === null ? undefined : text(script, reply, 11);
  return {
    key: ref.key,
    tenant: ref.tenant,
    tool: text(script, reply, 8),
    fingerprint: text(script, reply, 9),
    state: state as RecordState,
    fence: integer(script, reply, 3),
    attempt: integer(script, reply, 4),
    owner: text(script, reply, 5),
    leaseExpiresAtMs: integer(script, reply, 6),
    expiresAtMs: integer(script, reply, 7),
    ...(outcome === undefined ? {} : { outcome }),
    ...(errorType === undefined
      ? {}
      : { error: { type: errorType, message: reply[12] === null ? '' : text(script, reply, 12) } }),
    ...operatorFields(script, ref, reply),
    ...(withApproval ? { approval: decodeApproval(script, whole.slice(whole.length - 4), whole) } : {}),
  };
}

/** An approval entry: approved (1|0), by, reason, atMs (each absent one nil), as decide-1.lua packs it. */
function decodeApproval(script: string, entry: Reply, whole: Reply): ApprovalEntry {
  const field = (index: number) => {
    const value = entry[index];
    if (value === null || value === undefined) return undefined;
    if (typeof value === 'string') return value;
    if (Buffer.isBuffer(value)) return value.toString('utf8');
    throw new UnexpectedReplyError(script, whole);
  };
  const approved = Number(entry[0]);
  const atMs = Number(entry[3]);
  if ((approved !== 0 && approved !== 1) || !Number.isSafeInteger(atMs)) {
    throw new UnexpectedReplyError(script, whole);
  }
  const by = field(1);
  const reason = field(2);
  return {
    approved: approved === 1,
    ...(by === undefined ? {} : { by }),
    ...(reason === undefined ? {} : { reason }),
    atMs,
  };
}

/** The operator fields of a record reply (absent in a 13-element reply). */
function operatorFields(script: string, ref: RecordRef, reply: Reply): Partial<IdempotencyRecord> {
  if (reply.length === 13) return {};
  const optionalText = (index: number) => (reply[index] === null ? undefined : text(script, reply, index));
  const fields: { -readonly [K in keyof IdempotencyRecord]?: IdempotencyRecord[K] } = {};
  const runId = optionalText(13);
  const callId = optionalText(14);
  const description = optionalText(15);
  if (runId !== undefined) fields.runId = runId;
  if (callId !== undefined) fields.callId = callId;
  if (description !== undefined) fields.description = description;
  if (reply[16] !== null) fields.claimedAtMs = integer(script, reply, 16);
  if (reply[17] !== null) fields.updatedAtMs = integer(script, reply, 17);
  fields.retentionMs = integer(script, reply, reply.length - 2);
  const codec = optionalText(reply.length - 1);
  if (codec !== undefined) fields.codec = codec;
  if (reply.length === 32) fields.resolution = decodeEntry(script, ref, reply.slice(18), reply);
  return fields;
}

/**
 * A resolution entry: action, fromState, fence, attempt, errorType, errorMessage,
 * by, reason, atMs, tool, expiresAtMs, forced (each absent one nil; `forced` 1 when true), as
 * resolve-1.lua packs it.
 */
export function decodeEntry(script: string, ref: RecordRef, entry: Reply, whole: unknown): ResolutionEntry {
  const field = (index: number) => {
    const value = entry[index];
    if (value === null || value === undefined) return undefined;
    if (typeof value === 'string') return value;
    if (Buffer.isBuffer(value)) return value.toString('utf8');
    throw new UnexpectedReplyError(script, whole);
  };
  const number = (index: number) => {
    const value = Number(entry[index]);
    if (!Number.isSafeInteger(value)) throw new UnexpectedReplyError(script, whole);
    return value;
  };
  const action = field(0);
  const fromState = field(1);
  if (
    (action !== 'completed' && action !== 'released') ||
    (fromState !== 'indeterminate' && fromState !== 'abandoned' && fromState !== 'in_progress')
  ) {
    throw new UnexpectedReplyError(script, whole);
  }
  const errorType = field(4);
  const by = field(6);
  const reason = field(7);
  return {
    key: ref.key,
    tenant: ref.tenant,
    tool: field(9) ?? '',
    action,
    fromState,
    fence: number(2),
    attempt: number(3),
    ...(errorType === undefined ? {} : { error: { type: errorType, message: field(5) ?? '' } }),
    ...(by === undefined ? {} : { by }),
    ...(reason === undefined ? {} : { reason }),
    atMs: number(8),
    ...(entry[11] === 1 ? { forced: true as const } : {}),
  };
}

/** What a claim's reply is judged by when it carries a settled record's string. */
export type ClaimCheck = Pick<ClaimOptions, 'tool' | 'fingerprint' | 'checkFingerprint' | 'approval'>;

/**
 * A settled record as the claim found it (`{ 20, 0, <record string> }`): another tool, or
 * another fingerprint when checked (always, when an approval binds it: `claimConflicts`), is a
 * conflict; else its state answers, as claim-1.lua judged it before it replied the string
 * instead. Awaiting or denied: `approval_required` / `denied` (nothing was written). An approved
 * record never comes here: only claim-1.lua consumes it.
 */
function settledClaimResult(ref: RecordRef, raw: unknown, reply: Reply, check: ClaimCheck): ClaimResult {
  const bytes = reply[2];
  const fields = Buffer.isBuffer(bytes) ? recordReplyOfString(ReplyCode.settledString, bytes) : undefined;
  if (fields === undefined) throw new UnexpectedReplyError('claim', raw);
  const record = decodeRecord('claim', ref, fields);
  if (claimConflicts(record, check)) return { status: 'conflict', record };
  const approval = approvalClaimDecision(record);
  if (approval === 'approval_required' || approval === 'denied') return { status: approval, record };
  switch (record.state) {
    case 'completed':
      return { status: 'completed', record };
    case 'indeterminate':
      return { status: 'indeterminate', record };
    case 'abandoned':
      return { status: 'abandoned', record };
    default:
      throw new UnexpectedReplyError('claim', raw);
  }
}

export function claimResult(ref: RecordRef, raw: unknown, check?: ClaimCheck): ClaimResult {
  const reply = asReply('claim', raw);
  switch (codeOf(reply)) {
    case ReplyCode.settledString:
      if (check === undefined) throw new UnexpectedReplyError('claim', raw);
      return settledClaimResult(ref, raw, reply, check);
    case ReplyCode.acquired:
      return {
        status: 'acquired',
        fence: integer('claim', reply, 2),
        attempt: integer('claim', reply, 3),
        leaseExpiresAtMs: integer('claim', reply, 4),
        takeover: integer('claim', reply, 5) === 1,
      };
    case ReplyCode.completed:
      return { status: 'completed', record: decodeRecord('claim', ref, reply) };
    case ReplyCode.busy:
      return { status: 'busy', record: decodeRecord('claim', ref, reply), nowMs: integer('claim', reply, 1) };
    case ReplyCode.indeterminate:
      return { status: 'indeterminate', record: decodeRecord('claim', ref, reply) };
    case ReplyCode.abandoned:
      return { status: 'abandoned', record: decodeRecord('claim', ref, reply) };
    case ReplyCode.conflict:
      return { status: 'conflict', record: decodeRecord('claim', ref, reply) };
    case ReplyCode.approvalRequired:
      return { status: 'approval_required', record: decodeRecord('claim', ref, reply) };
    default:
      throw new UnexpectedReplyError('claim', raw);
  }
}

export function renewResult(raw: unknown): RenewResult {
  const reply = asReply('renew', raw);
  switch (codeOf(reply)) {
    case ReplyCode.done:
      return { status: 'renewed', leaseExpiresAtMs: integer('renew', reply, 2) };
    case ReplyCode.notFound:
      return { status: 'lost', reason: 'not_found' };
    case ReplyCode.stale:
      return { status: 'lost', reason: 'stale' };
    case ReplyCode.settled:
      return { status: 'lost', reason: 'settled' };
    default:
      throw new UnexpectedReplyError('renew', raw);
  }
}

/** complete, release and markIndeterminate share one reply shape. */
function holderResult<Done extends string>(
  script: string,
  done: Done,
  ref: RecordRef,
  raw: unknown,
):
  | { readonly status: Done }
  | { readonly status: 'stale'; readonly record: IdempotencyRecord }
  | { readonly status: 'not_found' } {
  const reply = asReply(script, raw);
  switch (codeOf(reply)) {
    case ReplyCode.done:
      return { status: done };
    case ReplyCode.notFound:
      return { status: 'not_found' };
    case ReplyCode.stale:
    case ReplyCode.settled:
      return { status: 'stale', record: decodeRecord(script, ref, reply) };
    default:
      throw new UnexpectedReplyError(script, raw);
  }
}

export function completeResult(ref: RecordRef, raw: unknown): CompleteResult {
  return holderResult('complete', 'completed', ref, raw);
}

export function releaseResult(ref: RecordRef, raw: unknown): ReleaseResult {
  return holderResult('release', 'released', ref, raw);
}

export function markIndeterminateResult(ref: RecordRef, raw: unknown): MarkIndeterminateResult {
  return holderResult('markIndeterminate', 'marked', ref, raw);
}

export function resolveResult(ref: RecordRef, raw: unknown): ResolveResult {
  const reply = asReply('resolve', raw);
  switch (codeOf(reply)) {
    case ReplyCode.done:
      return { status: 'resolved' };
    case ReplyCode.notFound:
      return { status: 'not_found' };
    case ReplyCode.changed:
      return { status: 'changed', record: decodeRecord('resolve', ref, reply) };
    case ReplyCode.notResolvable:
      return { status: 'not_resolvable', record: decodeRecord('resolve', ref, reply) };
    case ReplyCode.holderAlive:
      return { status: 'holder_alive', record: decodeRecord('resolve', ref, reply) };
    default:
      throw new UnexpectedReplyError('resolve', raw);
  }
}

/** A record read with the Redis clock. */
export interface RecordRead {
  readonly record: IdempotencyRecord | null;
  readonly nowMs: number;
}

export function getResult(ref: RecordRef, raw: unknown): RecordRead {
  const reply = asReply('get', raw);
  switch (codeOf(reply)) {
    case ReplyCode.found:
      return { record: decodeRecord('get', ref, reply), nowMs: integer('get', reply, 1) };
    case ReplyCode.notFound:
      return { record: null, nowMs: integer('get', reply, 1) };
    default:
      throw new UnexpectedReplyError('get', raw);
  }
}
