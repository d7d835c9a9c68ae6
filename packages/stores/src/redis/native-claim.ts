// The claim on native commands (Redis >= 7.0), the hot path of a first call and of a repeat: one
// `SET k <in-progress record> NX PX <leaseMs + retentionMs> GET`, which is atomic. The key absent:
// the record is created (acquired, fence 1), exactly as claim-1.lua would create it, its deadlines
// counted by the Redis clock from the SET (the key's expiry). The key present: nothing changes and
// the reply is the record, which the client judges only when it is settled (a repeat, a conflict,
// indeterminate, abandoned: a settled record changes only by resolve, forget or its expiry, so the
// answer holds at the instant of the read). A record in progress is never judged here (no lease
// is judged by the worker's clock): the store sends claim-1.lua, which decides busy, a resent claim
// of the same attempt, a takeover or indeterminate by the Redis clock (spec/: the native claim
// step, and BAD_NATIVE_TAKEOVER, the client-judged takeover the model check refutes).
//
// The value written has no clock in it (docs/redis.md, "Native claims"): no leaseExpiresAtMs,
// expiresAtMs, claimedAtMs or updatedAtMs, but leaseMs and the tenant; the scripts read its
// deadlines from the key's expiry (decodeRecord, statements/includes/01-record.lua) and write
// its index entries the first time one of them rewrites it.
import type { ClaimOptions, ClaimResult, RecordRef } from '@toolfence/core/store';
import type { Cluster, Redis } from 'ioredis';
import type { RedisExchange } from './backend.js';
import { claimResult, ReplyCode } from './record-codec.js';

/** A state as the first value of a record string: a MessagePack fixstr (every state is under 32 bytes). */
const stateHead = (state: string) => Buffer.from([0xa0 + state.length, ...Buffer.from(state, 'latin1')]);
const IN_PROGRESS = stateHead('in_progress');
/** An approval not yet used: only claim-1.lua consumes it, in the step that reads it. */
const APPROVED = stateHead('approved');

/** MessagePack of the values Lua's cmsgpack reads back as the same values: nil, whole numbers >= 0, strings. */
function packValues(values: readonly (string | number | undefined)[]): Buffer {
  const parts: Buffer[] = [];
  for (const value of values) {
    if (value === undefined) {
      parts.push(Buffer.from([0xc0]));
    } else if (typeof value === 'number') {
      if (value <= 0x7f) parts.push(Buffer.from([value]));
      else if (value <= 0xffffffff) {
        const part = Buffer.alloc(5);
        part[0] = 0xce;
        part.writeUInt32BE(value, 1);
        parts.push(part);
      } else {
        const part = Buffer.alloc(9);
        part[0] = 0xcf;
        part.writeBigUInt64BE(BigInt(value), 1);
        parts.push(part);
      }
    } else {
      const bytes = Buffer.from(value, 'utf8');
      const length = bytes.length;
      let head: Buffer;
      if (length < 32) head = Buffer.from([0xa0 + length]);
      else if (length <= 0xffff) head = Buffer.from([0xda, length >> 8, length & 0xff]);
      else {
        head = Buffer.alloc(5);
        head[0] = 0xdb;
        head.writeUInt32BE(length, 1);
      }
      parts.push(head, bytes);
    }
  }
  return Buffer.concat(parts);
}

const given = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

/**
 * The in-progress record of a native claim, in the order of statements/includes/01-record.lua,
 * the clock-dependent values absent, then leaseMs and the tenant.
 */
export function packNativeRecord(ref: RecordRef, options: ClaimOptions): Buffer {
  return packValues([
    'in_progress',
    1, // fence
    1, // attempt
    options.owner,
    undefined, // leaseExpiresAtMs: the key's expiry minus retentionMs
    undefined, // expiresAtMs: the key's expiry
    options.retentionMs,
    options.tool,
    options.fingerprint,
    undefined, // outcome
    undefined, // errorType
    undefined, // errorMessage
    given(options.runId),
    given(options.callId),
    given(options.description),
    undefined, // claimedAtMs: the lease deadline minus leaseMs
    undefined, // updatedAtMs: the same
    undefined, // resolution
    undefined, // waited
    given(options.codec),
    options.leaseMs,
    ref.tenant,
  ]);
}

/** The native commands were refused: the server is older than Redis 7.0 (or does not have them). */
export const NOT_NATIVE: unique symbol = Symbol('not native');

/**
 * A reply error saying the server lacks the native claim: Redis 6.2 refuses `SET ... NX GET` as a
 * syntax error and does not know `PEXPIRETIME`. Neither wrote anything.
 */
export function lacksNativeCommands(error: unknown): boolean {
  return (
    error instanceof Error &&
    error.name === 'ReplyError' &&
    /^ERR (syntax error|unknown command)/i.test(error.message)
  );
}

/**
 * Claims natively. Returns the claim's answer when the native command decided it (acquired, or a
 * settled record judged, awaiting_approval and denied included), undefined when the key holds a
 * record in progress or an approval not yet used (then only the claim script may decide), or
 * NOT_NATIVE when the server lacks the commands (nothing was written). Never called for a claim
 * with `approval: 'required'`: a `SET NX` that finds nothing would create an in-progress record
 * without an approval, so such claims go to the script (RedisStore.claim).
 * @throws StoreUnavailableError, StoreConfigurationError (as every exchange)
 */
export async function claimNatively(
  exchange: RedisExchange,
  client: Redis | Cluster,
  key: string,
  ref: RecordRef,
  options: ClaimOptions,
): Promise<ClaimResult | undefined | typeof NOT_NATIVE> {
  const value = packNativeRecord(ref, options);
  // PEXPIRETIME goes in the same write (the socket is corked for the tick): a created record's
  // lease deadline by the Redis clock, with no second round trip.
  const replies = await exchange.run('claim', client, () =>
    Promise.all([
      client.setBuffer(key, value, 'PX', options.leaseMs + options.retentionMs, 'NX', 'GET'),
      client.pexpiretime(key),
    ]).catch((error: unknown): typeof NOT_NATIVE => {
      if (lacksNativeCommands(error)) return NOT_NATIVE;
      throw error;
    }),
  );
  if (replies === NOT_NATIVE) return NOT_NATIVE;
  const [previous, expireAtMs] = replies;
  if (previous === null) {
    return {
      status: 'acquired',
      fence: 1,
      attempt: 1,
      // -2: the key was deleted between the two commands (forget); the deadline is then only
      // reported (the guard counts its lease from its own send), never judged by the store.
      leaseExpiresAtMs: expireAtMs > 0 ? expireAtMs - options.retentionMs : Date.now() + options.leaseMs,
      takeover: false,
    };
  }
  if (previous.subarray(0, IN_PROGRESS.length).equals(IN_PROGRESS)) return undefined;
  if (previous.subarray(0, APPROVED.length).equals(APPROVED)) return undefined;
  return exchange.decode('claim', () => claimResult(ref, [ReplyCode.settledString, 0, previous], options));
}
