// RedisStore.decideApproval: one script on the record (statements/decide-1.lua).
// RedisStore.forget: a tenant's records, their index entries and resolution journals, erased
// in batches by statements/forget-2.lua from the tenant's expiry index (no SCAN of the keyspace).
import type { ApprovalDecision, DecideResult, RecordRef } from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import type { RedisExchange } from './backend.js';
import { asReply, decodeRecord, integer, ReplyCode, UnexpectedReplyError } from './record-codec.js';
import type { ScriptCommand } from './script-commands.js';

/** Index entries erased per script call in `forget`. */
const FORGET_BATCH = 500;

/**
 * `forget` on Redis: the tenant's expiry index (`names.expiry`) names every record and journal of
 * the tenant; erased in batches (one script each, on the tenant's slot) until none is left.
 * @throws StoreUnavailableError
 */
export async function forgetTenant(
  client: Redis | Cluster,
  exchange: RedisExchange,
  command: ScriptCommand,
  names: { readonly index: string; readonly expiry: string },
): Promise<number> {
  let erased = 0;
  for (;;) {
    const raw = await exchange.run('forget', client, () => command(names.index, names.expiry, FORGET_BATCH));
    const { count, left } = exchange.decode('forget', () => {
      const reply = asReply('forget', raw);
      if (Number(reply[0]) !== 10 || reply.length !== 4) throw new UnexpectedReplyError('forget', raw);
      return { count: integer('forget', reply, 2), left: integer('forget', reply, 3) };
    });
    erased += count;
    if (left === 0) return erased;
  }
}

/**
 * `decideApproval` on Redis: one decide-1.lua call on the record's key (its tenant's slot), the
 * decision already checked (`checkApprovalDecision`, `checkRetentionMs`).
 * @throws StoreUnavailableError
 */
export async function decideOnRedis(
  client: Redis | Cluster,
  exchange: RedisExchange,
  command: ScriptCommand,
  key: string,
  ref: RecordRef,
  decision: ApprovalDecision,
  retentionMs: number,
): Promise<DecideResult> {
  const raw = await exchange.run('decideApproval', client, () =>
    command(
      key,
      decision.approved ? '1' : '0',
      decision.tool,
      decision.fingerprint,
      decision.by ?? '',
      decision.reason ?? '',
      decision.expect === undefined ? '0' : '1',
      decision.expect?.owner ?? '',
      retentionMs,
      ref.tenant, // then what a record the decision creates keeps for operators
      decision.runId ?? '',
      decision.callId ?? '',
      decision.description ?? '',
      decision.codec ?? '',
    ),
  );
  return exchange.decode('decideApproval', () => decideResult(ref, raw));
}

/** The reply of decide-1.lua. */
function decideResult(ref: RecordRef, raw: unknown): DecideResult {
  const reply = asReply('decide', raw);
  switch (Number(reply[0])) {
    case ReplyCode.done:
      return { status: 'decided', record: decodeRecord('decide', ref, reply) };
    case ReplyCode.notFound:
      return { status: 'not_found' };
    case ReplyCode.conflict:
      return { status: 'conflict', record: decodeRecord('decide', ref, reply) };
    case ReplyCode.consumed:
      return { status: 'consumed', record: decodeRecord('decide', ref, reply) };
    case ReplyCode.changed:
      return { status: 'changed', record: decodeRecord('decide', ref, reply) };
    case ReplyCode.denied:
      return { status: 'denied', record: decodeRecord('decide', ref, reply) };
    default:
      throw new UnexpectedReplyError('decide', raw);
  }
}
